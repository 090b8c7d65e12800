"""Tests of the Open WebUI filter, driven the way Open WebUI 0.11.0's function runtime drives it.

No Open WebUI is needed: `call_filter` passes arguments as utils/filter.py:123 (get_filter_params)
does, only those the handler declares, and `MessageEmitter` is an `__event_emitter__` bound to one
message that stores `embeds` events as socket/main.py:1036-1050 does.
"""

import asyncio
import base64
import hashlib
import hmac
import inspect
import json
import sys
import time
import unittest
from pathlib import Path
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, str(Path(__file__).parent))
from openclaw_asks_filter import Filter, mint_embed_token  # noqa: E402

SECRET = "s" * 40


def decode(token: str) -> dict:
    header, payload, signature = token.split(".")
    expected = hmac.new(SECRET.encode(), f"{header}.{payload}".encode(), hashlib.sha256).digest()
    padded = signature + "=" * (-len(signature) % 4)
    assert hmac.compare_digest(base64.urlsafe_b64decode(padded), expected), "bad signature"
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class MessageEmitter:
    """An `__event_emitter__` bound to one message of a chat, like get_event_emitter(metadata)."""

    def __init__(self, chat: dict, message_id: str) -> None:
        self.chat = chat
        self.message_id = message_id
        self.events: list = []

    async def __call__(self, event: dict) -> None:
        self.events.append(event)
        if event.get("type") == "embeds":
            message = self.chat["messages"][self.message_id]
            data = event.get("data", {})
            embeds = list(data.get("embeds", []))
            if not data.get("replace", False):
                embeds.extend(message.get("embeds", []))
            message["embeds"] = embeds


def call_filter(plugin: Filter, hook: str, body: dict, extra_params: dict):
    handler = getattr(plugin, hook)
    params = {"body": body} | {k: v for k, v in extra_params.items() if k in inspect.signature(handler).parameters}
    return asyncio.run(handler(**params))


def new_chat(*assistant_ids: str) -> dict:
    return {"messages": {message_id: {"id": message_id, "role": "assistant", "content": ""} for message_id in assistant_ids}}


class InletTest(unittest.TestCase):
    def run_inlet(
        self,
        valves: dict,
        *,
        chat: dict | None = None,
        metadata: dict | None = None,
        user: dict | None = None,
        model: dict | None = None,
        body: dict | None = None,
    ) -> tuple[dict, MessageEmitter]:
        chat = chat if chat is not None else new_chat("assistant-2")
        metadata = {"user_id": "user-7", "chat_id": "chat/42", "message_id": "assistant-2", "session_id": "sock-1", **(metadata or {})}
        emitter = MessageEmitter(chat, metadata["message_id"])
        plugin = Filter()
        plugin.valves = Filter.Valves(**valves)
        body = body if body is not None else {"model": "openclaw", "messages": [{"id": "user-1", "role": "user", "content": "hi"}]}
        extra_params = {
            "__event_emitter__": emitter,
            "__event_call__": None,
            "__user__": user if user is not None else {"id": "user-7", "name": "Dana", "role": "user"},
            "__metadata__": metadata,
            "__request__": None,
            "__model__": model if model is not None else {"id": "openclaw"},
            "__chat_id__": metadata.get("chat_id"),
            "__message_id__": metadata.get("message_id"),
            "__id__": "openclaw_asks",
        }
        result = call_filter(plugin, "inlet", body, extra_params)
        self.assertIs(result, body, "the request body passes through unchanged")
        return chat, emitter

    def widget_of(self, chat: dict, message_id: str) -> tuple:
        embeds = chat["messages"][message_id].get("embeds", [])
        self.assertEqual(len(embeds), 1, f"one widget on {message_id}: {embeds}")
        url = urlparse(embeds[0])
        return url, decode(parse_qs(url.query)["token"][0])

    def test_puts_the_widget_on_the_reply_about_to_stream(self):
        before = time.time()
        chat, emitter = self.run_inlet({"asks_url": "https://asks.example.com/", "auth_secret": SECRET})
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])
        self.assertIs(emitter.events[0]["data"]["replace"], True)
        url, claims = self.widget_of(chat, "assistant-2")
        self.assertEqual((url.scheme, url.netloc, url.path), ("https", "asks.example.com", "/embed/chat/chat%2F42"))
        self.assertEqual((claims["sub"], claims["chat"], claims["msg"]), ("user-7", "chat/42", "assistant-2"))
        self.assertEqual(claims["exp"] - claims["iat"], 24 * 3600, "default lifetime: 24 h")
        self.assertLessEqual(int(before * 1000), claims["mts"])
        self.assertLessEqual(claims["mts"], int(time.time() * 1000))
        self.assertEqual(claims["iat"], claims["mts"] // 1000)

    def test_takes_chat_and_message_from_the_metadata_not_the_body(self):
        body = {"model": "openclaw", "chat_id": "forged-chat", "id": "forged-message", "messages": []}
        chat, _ = self.run_inlet({"auth_secret": SECRET}, body=body)
        _, claims = self.widget_of(chat, "assistant-2")
        self.assertEqual((claims["chat"], claims["msg"]), ("chat/42", "assistant-2"))

    def test_continue_replaces_the_widget_instead_of_stacking_one(self):
        chat = new_chat("assistant-2")
        chat["messages"]["assistant-2"]["embeds"] = ["https://old.example.com/embed/chat/c?token=old"]
        self.run_inlet({"auth_secret": SECRET}, chat=chat)
        first_url, first = self.widget_of(chat, "assistant-2")
        self.run_inlet({"auth_secret": SECRET}, chat=chat)
        _, second = self.widget_of(chat, "assistant-2")
        self.assertEqual(first_url.netloc, "127.0.0.1:3000")
        self.assertEqual(second["msg"], first["msg"])
        self.assertGreaterEqual(second["mts"], first["mts"])

    def test_each_reply_gets_its_own_widget_ordered_by_mint_time(self):
        chat = new_chat("assistant-2", "assistant-4")
        self.run_inlet({"auth_secret": SECRET}, chat=chat, metadata={"message_id": "assistant-2"})
        self.run_inlet({"auth_secret": SECRET}, chat=chat, metadata={"message_id": "assistant-4"})
        _, older = self.widget_of(chat, "assistant-2")
        _, newer = self.widget_of(chat, "assistant-4")
        self.assertEqual((older["msg"], newer["msg"]), ("assistant-2", "assistant-4"))
        self.assertLessEqual(older["mts"], newer["mts"])

    def test_skips_background_tasks(self):
        for task in ("title_generation", "tags_generation", "follow_up_generation", "memory_review"):
            chat, emitter = self.run_inlet({"auth_secret": SECRET}, metadata={"task": task})
            self.assertEqual(emitter.events, [], task)
            self.assertNotIn("embeds", chat["messages"]["assistant-2"])

    def test_acts_only_on_the_listed_models(self):
        valves = {"auth_secret": SECRET, "model_ids": " openclaw-main , openclaw-ops "}
        _, other = self.run_inlet(valves, model={"id": "llama3"}, body={"model": "llama3", "messages": []})
        self.assertEqual(other.events, [])
        chat, listed = self.run_inlet(valves, model={"id": "openclaw-ops"}, body={"model": "openclaw-ops", "messages": []})
        self.assertEqual([event["type"] for event in listed.events], ["embeds"])
        self.widget_of(chat, "assistant-2")

    def test_the_model_list_falls_back_to_the_body_model_without_a_model_object(self):
        valves = {"auth_secret": SECRET, "model_ids": "openclaw"}
        plugin = Filter()
        plugin.valves = Filter.Valves(**valves)
        chat = new_chat("assistant-2")
        emitter = MessageEmitter(chat, "assistant-2")
        metadata = {"chat_id": "c", "message_id": "assistant-2"}
        call_filter(plugin, "inlet", {"model": "openclaw"}, {"__event_emitter__": emitter, "__user__": {"id": "u"}, "__metadata__": metadata})
        self.assertEqual(len(emitter.events), 1)

    def test_honours_the_token_lifetime_valve(self):
        chat, _ = self.run_inlet({"auth_secret": SECRET, "token_ttl_seconds": 7200})
        _, claims = self.widget_of(chat, "assistant-2")
        self.assertEqual(claims["exp"] - claims["iat"], 7200)

    def test_does_nothing_without_chat_message_user_or_emitter(self):
        for metadata in ({"chat_id": ""}, {"message_id": ""}, {"chat_id": "channel:c1"}):
            _, emitter = self.run_inlet({"auth_secret": SECRET}, metadata=metadata)
            self.assertEqual(emitter.events, [], metadata)
        _, emitter = self.run_inlet({"auth_secret": SECRET}, user={})
        self.assertEqual(emitter.events, [])
        plugin = Filter()
        plugin.valves = Filter.Valves(auth_secret=SECRET)
        body = {"messages": []}
        self.assertIs(call_filter(plugin, "inlet", body, {"__user__": {"id": "u"}, "__metadata__": {"chat_id": "c", "message_id": "m"}}), body)
        self.assertIs(call_filter(plugin, "inlet", body, {}), body)

    def test_asks_for_the_secret_instead_of_minting_a_weak_token(self):
        chat, emitter = self.run_inlet({"auth_secret": "short"})
        self.assertEqual([event["type"] for event in emitter.events], ["status"])
        self.assertNotIn("embeds", chat["messages"]["assistant-2"])



class SendAgainTest(unittest.TestCase):
    """A brand-new chat's tab may miss the inlet's event: the widget is sent again as the reply streams."""

    def setUp(self) -> None:
        self.now = 100.0
        self.plugin = Filter()
        self.plugin.clock = lambda: self.now
        self.plugin.valves = Filter.Valves(auth_secret=SECRET)
        self.chat = new_chat("assistant-2", "assistant-4")

    def hook(self, hook: str, message_id: str) -> list:
        emitter = MessageEmitter(self.chat, message_id)
        metadata = {"user_id": "user-7", "chat_id": "chat-1", "message_id": message_id}
        # The stream hook gets the chunk as `event` (utils/filter.py:124); inlet and outlet get `body`.
        payload = {"choices": [{"delta": {"content": "Hi"}}]} if hook == "stream" else {"model": "m", "messages": []}
        handler = getattr(self.plugin, hook)
        params = {"event" if hook == "stream" else "body": payload, "__event_emitter__": emitter, "__user__": {"id": "user-7"}, "__metadata__": metadata, "__model__": {"id": "m"}}
        result = asyncio.run(handler(**{k: v for k, v in params.items() if k in inspect.signature(handler).parameters}))
        self.assertIs(result, payload, f"{hook} passes its payload through unchanged")
        return emitter.events

    def test_sent_again_with_the_first_chunk_then_with_the_first_chunk_2_s_later_then_at_the_outlet(self):
        sent = self.hook("inlet", "assistant-2")
        self.assertEqual(self.hook("stream", "assistant-2"), sent)
        self.now += 1.9
        self.assertEqual(self.hook("stream", "assistant-2"), [])
        self.now += 0.1
        self.assertEqual(self.hook("stream", "assistant-2"), sent)
        self.now += 60
        self.assertEqual(self.hook("stream", "assistant-2"), [])
        self.assertEqual(self.hook("outlet", "assistant-2"), sent)
        self.assertEqual(self.hook("outlet", "assistant-2"), [], "forgotten after its outlet")
        self.assertEqual(len(self.chat["messages"]["assistant-2"]["embeds"]), 1)

    def test_a_reply_that_did_not_stream_gets_it_at_the_outlet(self):
        sent = self.hook("inlet", "assistant-2")
        self.assertEqual(self.hook("outlet", "assistant-2"), sent)

    def test_each_reply_gets_its_own_widget_again(self):
        first = self.hook("inlet", "assistant-2")
        second = self.hook("inlet", "assistant-4")
        self.assertNotEqual(first, second)
        self.assertEqual(self.hook("stream", "assistant-4"), second)
        self.assertEqual(self.hook("stream", "assistant-2"), first)

    def test_continue_starts_the_schedule_again_with_the_new_token(self):
        self.hook("inlet", "assistant-2")
        self.hook("stream", "assistant-2")
        self.now += 5
        again = self.hook("inlet", "assistant-2")
        self.assertEqual(self.hook("stream", "assistant-2"), again)

    def test_nothing_for_a_reply_whose_inlet_sent_nothing(self):
        self.plugin.valves = Filter.Valves(auth_secret=SECRET, model_ids="other")
        self.hook("inlet", "assistant-2")
        self.assertEqual(self.hook("stream", "assistant-2"), [])
        self.assertEqual(self.hook("outlet", "assistant-2"), [])

    def test_replies_that_never_finish_are_forgotten_beyond_a_bound(self):
        for index in range(300):
            self.chat["messages"][f"m{index}"] = {"id": f"m{index}", "role": "assistant"}
            self.hook("inlet", f"m{index}")
        self.assertEqual(self.hook("outlet", "m0"), [], "the oldest was dropped")
        self.assertEqual(len(self.hook("outlet", "m299")), 1)


class TokenTest(unittest.TestCase):
    def test_token_is_a_standard_hs256_jwt(self):
        token = mint_embed_token(SECRET, "u", "c", 60, now=1000)
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        self.assertEqual(header, {"alg": "HS256", "typ": "JWT"})
        self.assertEqual(decode(token), {"sub": "u", "chat": "c", "iat": 1000, "exp": 1060})

    def test_a_message_token_carries_the_message_and_the_mint_time_in_milliseconds(self):
        token = mint_embed_token(SECRET, "u", "c", 60, now=1000.4567, message_id="m-1")
        self.assertEqual(decode(token), {"sub": "u", "chat": "c", "msg": "m-1", "mts": 1000456, "iat": 1000, "exp": 1060})


if __name__ == "__main__":
    unittest.main()
