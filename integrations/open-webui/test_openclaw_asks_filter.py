"""Tests of the Open WebUI filter, driven the way Open WebUI 0.11.0's function runtime drives it.

No Open WebUI is needed: `call` passes arguments as utils/filter.py:123 (get_filter_params) does,
only those the handler declares, and `MessageEmitter` is an `__event_emitter__` bound to one message
that stores `embeds` events as socket/main.py:1036-1050 does. The reply-start endpoint is a real HTTP
server on loopback that checks the signature as OpenClaw Asks does.
"""

import asyncio
import base64
import hashlib
import hmac
import inspect
import json
import random
import sys
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, str(Path(__file__).parent))
from openclaw_asks_filter import (
    CATCH_UP_WITHIN_SECONDS,
    UNVOUCHED_PREFIX,
    Filter,
    PromptScanner,
    act_relay_event,
    is_openclaw_model,
    mint_embed_token,
    open_webui_chat_title,
    sign_request,
    tab_may_miss_new_chat_events,
    theme_relay_event,
    unsupported_release,
    visible_reply,
)

SECRET = "s" * 40
CASES = json.loads(
    (Path(__file__).parents[2] / "test" / "fixtures" / "text-prompts.json").read_text("utf-8")
)["cases"]


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
        # `execute` events (the theme relay) apart: the page runs them, the message keeps nothing.
        self.executed: list = []

    async def __call__(self, event: dict) -> None:
        if event.get("type") == "execute":
            self.executed.append(event)
            return
        self.events.append(event)
        if event.get("type") == "embeds":
            message = self.chat["messages"][self.message_id]
            data = event.get("data", {})
            embeds = list(data.get("embeds", []))
            if not data.get("replace", False):
                embeds.extend(message.get("embeds", []))
            message["embeds"] = embeds


def new_chat(*assistant_ids: str) -> dict:
    return {
        "messages": {
            message_id: {"id": message_id, "role": "assistant", "content": ""}
            for message_id in assistant_ids
        }
    }


async def call(plugin: Filter, hook: str, payload: dict, extra_params: dict):
    handler = getattr(plugin, hook)
    first = "event" if hook == "stream" else "body"
    params = {first: payload} | {
        k: v for k, v in extra_params.items() if k in inspect.signature(handler).parameters
    }
    return await handler(**params)


class ReplyStarts:
    """A stand-in for OpenClaw Asks' `POST /openwebui/replies` and `/openwebui/titles`: records what it was told, once the signature checks out."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        # What a reply's start is answered with: the server's act token of the reply (None: an empty answer).
        self.act: str | None = "act-token"
        self.received: list[dict] = []
        self.titles: list[dict] = []
        self.refused: list[str] = []
        starts = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                header = self.headers.get("x-openclaw-asks-signature", "")
                t = header.split(",")[0].removeprefix("t=")
                if (
                    self.path not in ("/openwebui/replies", "/openwebui/titles")
                    or header != sign_request(SECRET, body, now=int(t or 0))
                    or abs(time.time() - int(t)) > 300
                ):
                    starts.refused.append(header)
                    self.send_response(401)
                else:
                    is_reply = self.path == "/openwebui/replies"
                    (starts.received if is_reply else starts.titles).append(json.loads(body))
                    self.send_response(starts.status)
                    if is_reply and starts.act is not None:
                        answer = json.dumps({"ok": True, "act": starts.act}).encode()
                        self.send_header("content-length", str(len(answer)))
                        self.end_headers()
                        self.wfile.write(answer)
                        return
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FilterTestCase(unittest.IsolatedAsyncioTestCase):
    def setUp(self) -> None:
        self.starts = ReplyStarts()
        self.addCleanup(self.starts.close)
        self.chat = new_chat("assistant-2", "assistant-4")
        self.plugin = Filter()
        # The schedule of resends is long for a test: each test that needs it sets its own.
        self.plugin.send_again_after = (3600.0,)
        self.plugin.title_looks_after = (3600.0,)
        self.chat_titles: dict[str, str] = {}

        async def chat_title(chat_id: str) -> str | None:
            return self.chat_titles.get(chat_id)

        self.plugin.chat_title = chat_title
        self.chat_owners: dict[str, str] = {}

        async def chat_owner(chat_id: str) -> str | None:
            return self.chat_owners.get(chat_id)

        self.plugin.chat_owner = chat_owner
        self.plugin.valves = Filter.Valves(
            auth_secret=SECRET, asks_url="https://asks.example.com/", server_url=self.starts.url
        )

    async def asyncTearDown(self) -> None:
        for message_id in list(self.plugin._replies):
            self.plugin._forget(message_id)
        for watch in [*self.plugin._title_watches, *self.plugin._catch_ups.values()]:
            watch.cancel()

    def params(self, reply: str = "assistant-2", **metadata) -> tuple[dict, MessageEmitter]:
        emitter = MessageEmitter(self.chat, reply)
        meta = {
            "user_id": "user-7",
            "chat_id": "chat/42",
            "message_id": reply,
            "session_id": "sock-1",
            **metadata,
        }
        return {
            "__event_emitter__": emitter,
            "__event_call__": None,
            "__user__": {"id": "user-7", "name": "Dana", "role": "user"},
            "__metadata__": meta,
            "__request__": None,
            "__model__": {"id": "openclaw/main"},
            "__chat_id__": meta.get("chat_id"),
            "__message_id__": meta.get("message_id"),
            "__id__": "openclaw_asks",
        }, emitter

    async def inlet(
        self, message_id: str = "assistant-2", body: dict | None = None, **overrides
    ) -> tuple[dict, MessageEmitter]:
        params, emitter = self.params(message_id, **overrides.pop("metadata", {}))
        params.update(overrides)
        body = (
            body
            if body is not None
            else {
                "model": "openclaw/main",
                "messages": [{"id": "user-1", "role": "user", "content": "hi"}],
            }
        )
        result = await call(self.plugin, "inlet", body, params)
        self.assertIs(result, body, "the inlet returns the request body it was given")
        return body, emitter

    def widget_of(self, message_id: str) -> tuple:
        embeds = self.chat["messages"][message_id].get("embeds", [])
        self.assertEqual(len(embeds), 1, f"one widget on {message_id}: {embeds}")
        url = urlparse(embeds[0])
        return url, decode(parse_qs(url.query)["token"][0])


class InletTest(FilterTestCase):
    async def test_puts_the_widget_on_the_reply_about_to_stream(self):
        before = time.time()
        _, emitter = await self.inlet()
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])
        self.assertIs(emitter.events[0]["data"]["replace"], True)
        url, claims = self.widget_of("assistant-2")
        self.assertEqual(
            (url.scheme, url.netloc, url.path),
            ("https", "asks.example.com", "/embed/chat/chat%2F42"),
        )
        self.assertEqual(
            (claims["sub"], claims["chat"], claims["msg"]), ("user-7", "chat/42", "assistant-2")
        )
        self.assertEqual(claims["exp"] - claims["iat"], 24 * 3600, "default lifetime: 24 h")
        self.assertLessEqual(int(before * 1000), claims["mts"])
        self.assertLessEqual(claims["mts"], int(time.time() * 1000))
        self.assertEqual(claims["iat"], claims["mts"] // 1000)

    async def test_names_the_replys_gateway_session_with_the_openai_user(self):
        body, _ = await self.inlet()
        self.assertEqual(body["user"], "openwebui:chat/42:assistant-2")

    async def test_tells_openclaw_asks_whose_chat_it_is_before_the_request_goes_on(self):
        await self.inlet()
        _, claims = self.widget_of("assistant-2")
        # Received before the inlet returned: the reply's first ask already meets the guest rules.
        self.assertEqual(
            self.starts.received,
            [
                {
                    "chatId": "chat/42",
                    "replyId": "assistant-2",
                    "userId": "user-7",
                    "userName": "Dana",
                    "startedAt": claims["mts"],
                }
            ],
        )
        self.assertEqual(self.starts.refused, [])

    async def test_names_the_chats_owner_as_open_webui_records_it_beside_the_replys_user(self):
        # A guest replying in a chat shared with them ("Allow replies"): the chat stays the owner's.
        self.chat_owners["chat/42"] = "owner-1"
        self.starts.act = "act-token"
        self.plugin.send_again_after = (0.01,)
        _, emitter = await self.inlet()
        self.assertEqual(
            (self.starts.received[0]["userId"], self.starts.received[0]["chatOwnerId"]),
            ("user-7", "owner-1"),
        )
        # Only the owner's view draws embeds: no widget carrying the guest's token, no act token.
        self.assertEqual((emitter.events, emitter.executed), ([], []))
        self.assertIsNone(self.plugin._replies["assistant-2"].send_again)
        self.assertNotIn("embeds", self.chat["messages"]["assistant-2"])

        async def unreadable(chat_id: str) -> str | None:
            raise RuntimeError("database locked")

        self.plugin.chat_owner = unreadable
        with self.assertLogs("openclaw_asks_filter", "WARNING"):
            await self.inlet()
        self.assertNotIn("chatOwnerId", self.starts.received[1])

    async def test_the_owners_own_reply_gets_its_widget(self):
        self.chat_owners["chat/42"] = "user-7"
        _, emitter = await self.inlet()
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])
        self.widget_of("assistant-2")

    async def test_outside_open_webui_the_chats_owner_is_not_known(self):
        from openclaw_asks_filter import open_webui_chat_owner  # noqa: PLC0415

        self.assertIsNone(await open_webui_chat_owner("chat/42"))

    async def test_reaches_openclaw_asks_at_asks_url_when_no_server_url_is_set(self):
        self.plugin.valves = Filter.Valves(auth_secret=SECRET, asks_url=self.starts.url)
        await self.inlet()
        self.assertEqual(len(self.starts.received), 1)

    async def test_goes_on_when_openclaw_asks_is_unreachable_or_refuses(self):
        self.plugin.valves = Filter.Valves(auth_secret=SECRET, server_url="http://127.0.0.1:9")
        with self.assertLogs("openclaw_asks_filter", "WARNING") as logged:
            body, emitter = await self.inlet()
        self.assertEqual(body["user"], "openwebui:chat/42:assistant-2")
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])
        self.assertNotIn(SECRET, "\n".join(logged.output))
        self.starts.status = 503
        self.plugin.valves = Filter.Valves(auth_secret=SECRET, server_url=self.starts.url)
        with self.assertLogs("openclaw_asks_filter", "WARNING"):
            await self.inlet()

    async def test_takes_chat_and_message_from_the_metadata_not_the_body(self):
        body = {
            "model": "openclaw/main",
            "chat_id": "forged-chat",
            "id": "forged-message",
            "user": "forged",
            "messages": [],
        }
        await self.inlet(body=body)
        _, claims = self.widget_of("assistant-2")
        self.assertEqual((claims["chat"], claims["msg"]), ("chat/42", "assistant-2"))
        self.assertEqual(body["user"], "openwebui:chat/42:assistant-2")

    async def test_continue_replaces_the_widget_instead_of_stacking_one(self):
        self.chat["messages"]["assistant-2"]["embeds"] = [
            "https://old.example.com/embed/chat/c?token=old"
        ]
        await self.inlet()
        _, first = self.widget_of("assistant-2")
        await self.inlet()
        _, second = self.widget_of("assistant-2")
        self.assertEqual(second["msg"], first["msg"])
        self.assertGreaterEqual(second["mts"], first["mts"])

    async def test_each_reply_gets_its_own_widget_ordered_by_mint_time(self):
        await self.inlet("assistant-2")
        await self.inlet("assistant-4")
        _, older = self.widget_of("assistant-2")
        _, newer = self.widget_of("assistant-4")
        self.assertEqual((older["msg"], newer["msg"]), ("assistant-2", "assistant-4"))
        self.assertLessEqual(older["mts"], newer["mts"])

    async def test_background_tasks_get_no_widget_and_a_session_no_reply_start_vouches_for(self):
        sessions = set()
        for task in (
            "title_generation",
            "tags_generation",
            "follow_up_generation",
            "memory_review",
        ):
            body, emitter = await self.inlet(metadata={"task": task})
            self.assertEqual(emitter.events, [], task)
            self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX), body["user"])
            sessions.add(body["user"])
        self.assertEqual(len(sessions), 4, "each task a session of its own")
        self.assertNotIn("embeds", self.chat["messages"]["assistant-2"])
        self.assertEqual(self.starts.received, [])

    async def test_a_callers_own_user_never_reaches_the_gateway(self):
        # Naming the owner's chat: in a temporary chat (Controls > Advanced Params), from the API with no
        # chat, in a task; and in a normal chat, where the reply's own session wins.
        forged = "openwebui:owners-chat:their-reply"
        for metadata in (
            {"chat_id": "local:sock-1"},
            {"chat_id": None, "message_id": None},
            {"task": "title_generation"},
        ):
            body = {"model": "openclaw/main", "user": forged, "messages": []}
            await self.inlet(body=body, metadata=metadata)
            self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX), metadata)
        self.assertEqual(self.starts.received, [])

    async def test_a_message_id_with_a_colon_is_encoded_the_same_everywhere_the_server_sees_it(
        self,
    ):
        self.chat["messages"]["a:b%c"] = {"role": "assistant"}
        body, _ = await self.inlet("a:b%c")
        self.assertEqual(body["user"], "openwebui:chat/42:a%3Ab%25c")
        _, claims = self.widget_of("a:b%c")
        self.assertEqual(claims["msg"], "a%3Ab%25c")
        self.assertEqual(self.starts.received[-1]["replyId"], "a%3Ab%25c")

    async def test_ids_that_cannot_name_a_reply_get_a_session_no_reply_start_vouches_for(self):
        for metadata in ({"chat_id": "chat:42"}, {"chat_id": "c" * 201}):
            body, emitter = await self.inlet(metadata=metadata)
            self.assertEqual(emitter.events, [], metadata)
            self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX), metadata)
        self.chat["messages"]["m" * 199 + ":"] = {"role": "assistant"}
        body, _ = await self.inlet("m" * 199 + ":")
        self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX))
        self.assertEqual(self.starts.received, [])

    async def test_the_reply_start_names_the_user_in_one_capped_field_and_only_when_there_is_a_name(
        self,
    ):
        await self.inlet(__user__={"id": "user-7", "name": "D" * 500})
        await self.inlet(__user__={"id": "user-7", "name": "  "})
        self.assertEqual(len(self.starts.received[0]["userName"]), 80)
        self.assertNotIn("userName", self.starts.received[1])

    async def test_acts_on_openclaw_models_by_default(self):
        for model_id in (
            "openclaw",
            "openclaw/default",
            "openclaw/main",
            "openclaw:main",
            "gateway.openclaw/main",
            "openclaw_pipe.main",
        ):
            self.assertTrue(is_openclaw_model(model_id), model_id)
        for model_id in ("llama3", "gpt-4o", "my-openclaw", "openclawish", ""):
            self.assertFalse(is_openclaw_model(model_id), model_id)
        body, other = await self.inlet(
            body={"model": "llama3", "messages": []}, __model__={"id": "llama3"}
        )
        self.assertEqual(other.events, [])
        self.assertNotIn("user", body)
        # A workspace model built on an OpenClaw one.
        body, custom = await self.inlet(
            body={"model": "research", "messages": []},
            __model__={"id": "research", "info": {"base_model_id": "openclaw/research"}},
        )
        self.assertEqual([event["type"] for event in custom.events], ["embeds"])

    async def test_acts_only_on_the_listed_models_when_a_list_is_given(self):
        self.plugin.valves = Filter.Valves(
            auth_secret=SECRET, server_url=self.starts.url, model_ids=" agent-main , agent-ops "
        )
        _, other = await self.inlet(__model__={"id": "openclaw/main"})
        self.assertEqual(other.events, [])
        _, listed = await self.inlet(
            body={"model": "agent-ops", "messages": []}, __model__={"id": "agent-ops"}
        )
        self.assertEqual([event["type"] for event in listed.events], ["embeds"])

    async def test_the_model_list_falls_back_to_the_body_model_without_a_model_object(self):
        _, emitter = await self.inlet(__model__=None)
        self.assertEqual(len(emitter.events), 1)

    async def test_honours_the_token_lifetime_valve(self):
        self.plugin.valves = Filter.Valves(
            auth_secret=SECRET, server_url=self.starts.url, token_ttl_seconds=7200
        )
        await self.inlet()
        _, claims = self.widget_of("assistant-2")
        self.assertEqual(claims["exp"] - claims["iat"], 7200)

    async def test_no_widget_without_chat_message_user_or_emitter_or_in_unsaved_chats(self):
        for metadata in (
            {"chat_id": ""},
            {"message_id": ""},
            {"chat_id": "channel:c1"},
            {"chat_id": "temporary:sock-1"},
            {"chat_id": "local:sock-1"},
        ):
            body, emitter = await self.inlet(metadata=metadata)
            self.assertEqual(emitter.events, [], metadata)
            self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX), metadata)
        _, emitter = await self.inlet(__user__={})
        self.assertEqual(emitter.events, [])
        body, _ = await self.inlet(__event_emitter__=None)
        self.assertTrue(body["user"].startswith(UNVOUCHED_PREFIX))
        body = {"messages": []}
        self.assertIs(
            await call(
                self.plugin,
                "inlet",
                body,
                {"__user__": {"id": "u"}, "__metadata__": {"chat_id": "c", "message_id": "m"}},
            ),
            body,
        )
        self.assertIs(await call(self.plugin, "inlet", body, {}), body)
        self.assertEqual(self.starts.received, [])

    async def test_asks_for_the_secret_instead_of_minting_a_weak_token(self):
        self.plugin.valves = Filter.Valves(auth_secret="short", server_url=self.starts.url)
        body, emitter = await self.inlet()
        self.assertEqual([event["type"] for event in emitter.events], ["status"])
        self.assertNotIn("embeds", self.chat["messages"]["assistant-2"])
        self.assertEqual(self.starts.received, [], "nothing can be signed without the secret")
        self.assertEqual(body["user"], "openwebui:chat/42:assistant-2")


class TitleTest(FilterTestCase):
    """OpenClaw Asks names chats as Open WebUI does."""

    async def outlet(self) -> None:
        params, _ = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)

    async def test_a_titled_chat_s_reply_start_carries_its_title(self):
        self.chat_titles["chat/42"] = "Deploy plan"
        await self.inlet()
        self.assertEqual(self.starts.received[0]["title"], "Deploy plan")
        await self.outlet()
        self.assertEqual(self.plugin._title_watches, set(), "a titled chat is not watched")

    async def test_a_new_chat_s_title_made_after_its_first_reply_is_told_once(self):
        self.plugin.title_looks_after = (0.01, 0.03, 0.06)
        await self.inlet()
        self.assertNotIn("title", self.starts.received[0])
        await self.outlet()
        await asyncio.sleep(0.015)
        self.chat_titles["chat/42"] = "Quarterly report"
        await asyncio.gather(*self.plugin._title_watches)
        self.assertEqual(self.starts.titles, [{"chatId": "chat/42", "title": "Quarterly report"}])

    async def test_a_chat_that_never_gets_a_title_is_told_nothing(self):
        self.plugin.title_looks_after = (0.01, 0.02)
        await self.inlet()
        await self.outlet()
        await asyncio.gather(*self.plugin._title_watches)
        self.assertEqual(self.starts.titles, [])

    async def test_a_title_that_cannot_be_read_leaves_the_chat_named_by_its_id(self):
        async def broken(chat_id: str) -> str | None:
            raise RuntimeError("database is locked")

        self.plugin.chat_title = broken
        with self.assertLogs("openclaw_asks_filter", "WARNING"):
            _body, emitter = await self.inlet()
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])
        self.assertNotIn("title", self.starts.received[0])

    async def test_outside_open_webui_there_is_no_title(self):
        self.assertIsNone(await open_webui_chat_title("chat/42"))


class ThemeRelayTest(FilterTestCase):
    """The widget learns Open WebUI's chosen theme from a relay the filter runs in the page."""

    async def test_the_inlet_and_the_outlet_run_the_relay_for_the_widgets_origin(self):
        _, emitter = await self.inlet()
        theme = theme_relay_event("https://asks.example.com/")
        self.assertEqual(emitter.executed[0], theme)
        code = theme["data"]["code"]
        self.assertIn('const origin = "https://asks.example.com";', code)
        self.assertIn('"openclaw-asks:theme"', code)
        params, at_outlet = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertIn(theme, at_outlet.executed)

    def test_the_origin_is_a_json_string_whatever_the_url_holds(self):
        code = theme_relay_event('https://a.example:8443/x?"</script>')["data"]["code"]
        self.assertTrue(code.startswith('const origin = "https://a.example:8443";\n'))


class ActRelayTest(FilterTestCase):
    """The widget's stored token only views: the reply's act token goes to the page, never into the chat."""

    async def test_the_replys_act_token_goes_to_its_users_tabs_and_nowhere_into_the_chat(self):
        self.starts.act = 'act"</script>'
        _, emitter = await self.inlet()
        relay = act_relay_event("https://asks.example.com/", "assistant-2", 'act"</script>')
        self.assertEqual(emitter.executed[1:], [relay], "after the server gave it, once")
        code = relay["data"]["code"]
        self.assertTrue(code.startswith('const origin = "https://asks.example.com";\n'))
        self.assertIn('acts.set("assistant-2", "act\\"</script>");', code)
        self.assertIn('"openclaw-asks:act?"', code)
        stored = json.dumps(self.chat["messages"]["assistant-2"])
        self.assertNotIn('act\\"</script>', stored)
        self.assertNotIn("</script>", stored)
        self.assertEqual([event["type"] for event in emitter.events], ["embeds"])

    async def test_the_message_id_is_the_servers_reply_id(self):
        self.chat = new_chat("assistant:2")
        _, emitter = await self.inlet("assistant:2")
        self.assertIn(
            'acts.set("assistant%3A2", "act-token");', emitter.executed[-1]["data"]["code"]
        )

    async def test_no_act_token_no_relay_the_widget_only_views(self):
        for act, status in [(None, 200), ("act-token", 503)]:
            with self.subTest(act=act, status=status):
                self.starts.act = act
                self.starts.status = status
                _, emitter = await self.inlet()
                self.assertEqual(emitter.executed, [theme_relay_event("https://asks.example.com/")])

    async def test_a_tab_that_may_miss_the_inlet_gets_the_act_token_again_with_the_widget(self):
        _, emitter = await self.inlet()
        relay = emitter.executed[-1]
        # A send of the schedule once the act token is known (each send takes what the reply has then;
        # the inlet's own schedule may fire while the reply start is still on its way).
        self.plugin.send_again_after = (0.0,)
        await self.plugin._send_again(emitter, self.plugin._replies["assistant-2"])
        self.assertEqual(emitter.executed[-1:], [relay])
        self.assertEqual(emitter.executed.count(relay), 2)
        params, at_outlet = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertIn(relay, at_outlet.executed)


class SendAgainTest(FilterTestCase):
    """A brand-new chat's tab may miss the inlet's event: the widget is sent again on a schedule, text or not."""

    async def test_sent_again_on_the_schedule_without_any_text_then_once_more_at_the_outlet(self):
        self.plugin.send_again_after = (0.02, 0.05)
        _, emitter = await self.inlet()
        sent = emitter.events[0]
        await self.plugin._replies["assistant-2"].send_again
        self.assertEqual(emitter.events, [sent, sent, sent])
        params, at_outlet = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertEqual(at_outlet.events, [sent])
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertEqual(at_outlet.events, [sent], "forgotten after its outlet")
        self.assertEqual(len(self.chat["messages"]["assistant-2"]["embeds"]), 1)

    async def test_the_outlet_ends_the_schedule(self):
        self.plugin.send_again_after = (0.05,)
        _, emitter = await self.inlet()
        params, _ = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        task_done = asyncio.Event()
        asyncio.get_running_loop().call_later(0.1, task_done.set)
        await task_done.wait()
        self.assertEqual(len(emitter.events), 1)

    async def test_continue_starts_the_schedule_again_with_the_new_token(self):
        self.plugin.send_again_after = (0.03,)
        await self.inlet()
        _, again = await self.inlet()
        await self.plugin._replies["assistant-2"].send_again
        self.assertEqual(again.events, [again.events[0], again.events[0]])

    async def test_never_for_a_chat_the_tab_already_knows(self):
        # Each embeds event scrolls the widget into view: a later reply's card would move under the pointer.
        self.plugin.send_again_after = (0.02,)
        earlier = [
            {"id": "user-1", "role": "user", "content": "hi"},
            {"id": "assistant-0", "role": "assistant", "content": "hello"},
            {"id": "user-3", "role": "user", "content": "again"},
        ]
        _, emitter = await self.inlet(body={"model": "openclaw/main", "messages": earlier})
        self.assertIsNone(self.plugin._replies["assistant-2"].send_again, "no resend scheduled")
        self.assertEqual(len(emitter.events), 1, "the inlet's widget only")
        params, at_outlet = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertEqual(at_outlet.events, [])

    async def test_never_on_a_release_whose_tab_takes_a_new_chats_first_event(self):
        self.plugin.tab_may_miss_new_chat_events = False
        self.plugin.send_again_after = (0.02,)
        _, emitter = await self.inlet()
        self.assertIsNone(self.plugin._replies["assistant-2"].send_again, "no resend scheduled")
        self.assertEqual(len(emitter.events), 1, "the inlet's widget only")
        params, at_outlet = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertEqual(at_outlet.events, [])

    def test_releases_before_0_12_4_may_miss_a_new_chats_first_events(self):
        for version, may_miss in [
            ("0.11.0", True),
            ("0.12.3", True),
            ("0.12.4", False),
            ("0.12.10", False),
            ("0.13.0", False),
            ("1.0.0-rc1", False),
            (None, True),
            ("dev", True),
        ]:
            with self.subTest(version=version):
                self.assertEqual(tab_may_miss_new_chat_events(version), may_miss)

    async def test_nothing_for_a_reply_whose_inlet_sent_nothing(self):
        self.plugin.valves = Filter.Valves(
            auth_secret=SECRET, server_url=self.starts.url, model_ids="other"
        )
        await self.inlet()
        params, emitter = self.params()
        await call(self.plugin, "outlet", {"messages": []}, params)
        self.assertEqual(emitter.events, [])

    async def test_replies_that_never_finish_are_forgotten_beyond_a_bound(self):
        self.plugin.valves = Filter.Valves(auth_secret=SECRET, server_url="http://127.0.0.1:9")
        with self.assertLogs("openclaw_asks_filter", "WARNING"):
            for index in range(300):
                self.chat["messages"][f"m{index}"] = {"id": f"m{index}", "role": "assistant"}
                await self.inlet(f"m{index}")
        self.assertEqual(len(self.plugin._replies), 256)
        self.assertNotIn("m0", self.plugin._replies)
        self.assertIn("m299", self.plugin._replies)


class CatchUpTest(FilterTestCase):
    """A brand-new chat's first reply that ended before its tab knew the chat: its end is sent again."""

    def setUp(self) -> None:
        super().setUp()
        self.plugin.catch_up_after = (0.02, 0.04)
        self.quiet: list[tuple[dict, dict]] = []

        async def quiet_emitter(metadata: dict):
            async def emit(event: dict) -> None:
                self.quiet.append((metadata, event))

            return emit

        self.plugin.quiet_emitter = quiet_emitter

    async def outlet(self, text: str = "Which region?\n1. Europe\n2. America") -> None:
        params, _ = self.params()
        message = {"id": "assistant-2", "role": "assistant", "content": text}
        await call(self.plugin, "outlet", {"messages": [message]}, params)

    async def test_the_widget_and_the_end_again_after_the_outlet_through_an_emitter_that_stores_nothing(
        self,
    ):
        _, emitter = await self.inlet()
        widget = emitter.events[0]
        await self.outlet("OpenClaw needs input: Which region?\n1. Europe\n2. America")
        await self.plugin._catch_ups["chat/42"]
        end = {
            "type": "chat:completion",
            "data": {"done": True, "content": "Which region?\n1. Europe\n2. America"},
        }
        sent = [event for _, event in self.quiet]
        act = self.plugin_act_event(sent)
        self.assertEqual(sent, [widget, act, end, widget, act, end])
        self.assertEqual(self.quiet[0][0]["message_id"], "assistant-2", "bound to the reply")
        self.assertEqual(len(self.chat["messages"]["assistant-2"]["embeds"]), 1)
        self.assertNotIn("chat/42", self.plugin._catch_ups, "forgotten once done")

    def plugin_act_event(self, sent: list[dict]) -> dict:
        acts = [event for event in sent if event.get("type") == "execute"]
        self.assertTrue(acts, "the reply's act token is sent again too")
        return acts[0]

    async def test_a_next_reply_of_the_chat_ends_it(self):
        self.plugin.catch_up_after = (3600.0,)
        await self.inlet()
        await self.outlet()
        catch_up = self.plugin._catch_ups["chat/42"]
        self.chat["messages"]["assistant-4"] = {"id": "assistant-4", "role": "assistant"}
        await self.inlet("assistant-4")
        with self.assertRaises(asyncio.CancelledError):
            await catch_up
        self.assertEqual(self.quiet, [])

    async def test_not_for_a_reply_that_took_longer_nor_for_a_chat_the_tab_knows(self):
        await self.inlet()
        self.plugin._replies["assistant-2"].started -= CATCH_UP_WITHIN_SECONDS
        await self.outlet()
        self.assertEqual(self.plugin._catch_ups, {})
        earlier = [
            {"id": "user-1", "role": "user", "content": "hi"},
            {"id": "assistant-0", "role": "assistant", "content": "hello"},
        ]
        await self.inlet(body={"model": "openclaw/main", "messages": earlier})
        await self.outlet()
        self.assertEqual(self.plugin._catch_ups, {})

    async def test_not_on_a_release_whose_tab_takes_a_new_chats_first_event(self):
        self.plugin.tab_may_miss_new_chat_events = False
        await self.inlet()
        await self.outlet()
        self.assertEqual(self.plugin._catch_ups, {})


def chunk(content=None, finish=None) -> dict:
    delta = {} if content is None else {"content": content}
    return {
        "id": "chatcmpl_1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class StreamTest(FilterTestCase):
    """What Open WebUI stores and draws is what `stream` passes on (utils/middleware.py:4260-4267, 4652)."""

    async def streamed(self, deltas: list[str], message_id: str = "assistant-2") -> str:
        params, _ = self.params(message_id)
        shown = ""
        # As the Gateway streams a reply: the role's empty content first, the text, then the finish.
        for event in [chunk(""), *(chunk(delta) for delta in deltas), chunk(finish="stop")]:
            result = await call(self.plugin, "stream", event, params)
            self.assertIs(result, event)
            shown += result["choices"][0]["delta"].get("content") or ""
        return shown

    async def test_agrees_with_the_servers_scanner_on_every_shared_case_under_any_chunking(self):
        rng = random.Random(20)
        for case in CASES:
            reply = case["reply"]
            chunkings = [[reply], pieces(reply, 1), pieces(reply, 7), pieces(reply, 3)]
            cuts = (
                sorted(rng.sample(range(1, len(reply)), min(4, max(len(reply) - 1, 0))))
                if len(reply) > 1
                else []
            )
            chunkings.append(
                [reply[a:b] for a, b in zip([0, *cuts], [*cuts, len(reply)], strict=True)]
            )
            for deltas in chunkings:
                with self.subTest(case=case["name"], sizes=[len(delta) for delta in deltas][:3]):
                    await self.inlet()
                    self.assertEqual(await self.streamed(deltas), case["visible"])
            scanner = PromptScanner()
            scanner.push(reply)
            self.assertEqual(scanner.end()[1], case["prompt"], case["name"])
            self.assertEqual(visible_reply(reply), case["visible"], case["name"])

    async def test_holds_the_prompt_back_while_it_streams(self):
        await self.inlet()
        params, _ = self.params()
        seen = []
        for delta in [
            "Almost done.\nOpen",
            "Claw needs input: Which database?\n1. Postgres\n",
            "2. SQLite",
        ]:
            seen.append(
                (await call(self.plugin, "stream", chunk(delta), params))["choices"][0]["delta"][
                    "content"
                ]
            )
        self.assertEqual(seen, ["Almost done.\n", "", ""])
        end = await call(self.plugin, "stream", chunk(finish="stop"), params)
        self.assertEqual(
            end["choices"][0]["delta"]["content"], "Which database?\n1. Postgres\n2. SQLite"
        )

    async def test_a_reply_that_goes_on_after_open_webuis_own_tool_call_ends_at_its_last_finish(
        self,
    ):
        await self.inlet()
        params, _ = self.params()
        await call(self.plugin, "stream", chunk("Let me check.\n"), params)
        self.assertEqual(
            (await call(self.plugin, "stream", chunk(finish="tool_calls"), params))["choices"][0][
                "delta"
            ],
            {},
        )
        await call(self.plugin, "stream", chunk("OpenClaw needs input: Go on?"), params)
        self.assertEqual(
            (await call(self.plugin, "stream", chunk(finish="stop"), params))["choices"][0][
                "delta"
            ]["content"],
            "Go on?",
        )

    async def test_passes_other_chunks_and_other_replies_through(self):
        await self.inlet()
        params, _ = self.params()
        usage = {"choices": [], "usage": {"prompt_tokens": 1}}
        self.assertEqual(
            await call(self.plugin, "stream", usage, params),
            {"choices": [], "usage": {"prompt_tokens": 1}},
        )
        other, _ = self.params("assistant-4")
        raw = chunk("OpenClaw needs input: untouched")
        self.assertEqual(
            (await call(self.plugin, "stream", raw, other))["choices"][0]["delta"]["content"],
            "OpenClaw needs input: untouched",
        )
        self.assertEqual(await call(self.plugin, "stream", "not a dict", params), "not a dict")


class OutletTest(FilterTestCase):
    def stored(self, text: str) -> dict:
        return {
            "id": "assistant-2",
            "role": "assistant",
            "content": text,
            "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}],
        }

    async def test_cleans_a_reply_that_did_not_stream_in_content_and_in_the_output_items_the_page_draws(
        self,
    ):
        await self.inlet()
        message = self.stored(
            "Sure.\nOpenClaw needs input: Which database?\n1. Postgres\n2. SQLite"
        )
        params, _ = self.params()
        body = {
            "messages": [
                {
                    "id": "user-1",
                    "role": "user",
                    "content": "OpenClaw needs input: typed by the user",
                },
                message,
            ]
        }
        self.assertIs(await call(self.plugin, "outlet", body, params), body)
        self.assertEqual(message["content"], "Sure.\nWhich database?\n1. Postgres\n2. SQLite")
        self.assertEqual(message["output"][0]["content"][0]["text"], message["content"])
        self.assertEqual(body["messages"][0]["content"], "OpenClaw needs input: typed by the user")

    async def test_a_streamed_reply_is_stored_as_streamed(self):
        await self.inlet()
        params, _ = self.params()
        for event in (chunk("Hi.\nOpenClaw needs input: Go?"), chunk(finish="stop")):
            await call(self.plugin, "stream", event, params)
        message = self.stored("Hi.\nGo?")
        await call(self.plugin, "outlet", {"messages": [message]}, params)
        self.assertEqual(message["content"], "Hi.\nGo?")

    async def test_a_stream_cut_before_its_finish_still_gets_the_text_held_back(self):
        await self.inlet()
        params, _ = self.params()
        await call(self.plugin, "stream", chunk("Hi.\nOpenClaw needs input: Go?"), params)
        message = self.stored("Hi.\n")
        await call(self.plugin, "outlet", {"messages": [message]}, params)
        self.assertEqual(message["content"], "Hi.\nGo?")
        self.assertEqual(message["output"][0]["content"][0]["text"], "Hi.\nGo?")


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


class RequestTest(FilterTestCase):
    """The `request` hook (Open WebUI 0.11.2+) runs right before each model call, its tools added."""

    async def test_drops_open_webuis_own_ask_user_which_the_gateway_refuses_and_keeps_the_rest(
        self,
    ):
        params, _ = self.params()
        body = {
            "model": "openclaw/main",
            "tools": [tool("get_current_timestamp"), tool("ask_user"), tool("search_notes")],
            "tool_choice": "auto",
        }
        self.assertIs(await call(self.plugin, "request", body, params), body)
        names = [entry["function"]["name"] for entry in body["tools"]]
        self.assertEqual(names, ["get_current_timestamp", "search_notes"])
        self.assertEqual(body["tool_choice"], "auto")

    async def test_a_request_left_with_no_tools_sends_none(self):
        params, _ = self.params()
        body = {"model": "openclaw/main", "tools": [tool("ask_user")], "tool_choice": "auto"}
        await call(self.plugin, "request", body, params)
        self.assertNotIn("tools", body)
        self.assertNotIn("tool_choice", body)

    async def test_has_the_last_word_on_the_session(self):
        params, _ = self.params()
        body = {"model": "openclaw/main", "user": "openwebui:owners-chat:their-reply"}
        await call(self.plugin, "request", body, params)
        self.assertEqual(body["user"], "openwebui:chat/42:assistant-2")
        params["__metadata__"] = {**params["__metadata__"], "chat_id": "local:sock-1"}
        body["user"] = "openwebui:owners-chat:their-reply"
        await call(self.plugin, "request", body, params)
        unvouched = body["user"]
        self.assertTrue(unvouched.startswith(UNVOUCHED_PREFIX))
        await call(self.plugin, "request", body, params)
        self.assertEqual(body["user"], unvouched, "a follow-up call keeps its session")

    async def test_other_models_keep_their_tools(self):
        params, _ = self.params()
        params["__model__"] = {"id": "gpt-4o"}
        body = {"model": "gpt-4o", "tools": [tool("ask_user")]}
        await call(self.plugin, "request", body, params)
        self.assertEqual(body["tools"], [tool("ask_user")])


class ReleaseTest(unittest.TestCase):
    def test_an_unsupported_open_webui_release_is_said_in_one_line(self):
        self.assertIsNone(unsupported_release("0.12.4"))
        self.assertIsNone(unsupported_release("0.11.0"))
        self.assertIsNone(unsupported_release(None))  # outside Open WebUI: nothing to say
        self.assertEqual(
            unsupported_release("0.13.0"),
            "OpenClaw Asks supports Open WebUI 0.11.x, 0.12.x; this is 0.13.0: its cards may not show",
        )
        self.assertIsNotNone(unsupported_release("0.10.6"))
        self.assertIsNotNone(unsupported_release("0.110.0"))

    def test_the_filter_logs_it_when_loaded_in_an_unsupported_release(self):
        env = type(sys)("open_webui.env")
        env.VERSION = "0.13.0"
        package = type(sys)("open_webui")
        package.env = env
        saved = {name: sys.modules.get(name) for name in ("open_webui", "open_webui.env")}
        sys.modules.update({"open_webui": package, "open_webui.env": env})
        try:
            with self.assertLogs("openclaw_asks_filter", "WARNING") as logged:
                Filter()
        finally:
            for name, module in saved.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module
        self.assertEqual(len(logged.output), 1)
        self.assertIn("this is 0.13.0", logged.output[0])


class TokenTest(unittest.TestCase):
    def test_token_is_a_standard_hs256_jwt(self):
        token = mint_embed_token(SECRET, "u", "c", 60, now=1000)
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        self.assertEqual(header, {"alg": "HS256", "typ": "JWT"})
        self.assertEqual(decode(token), {"sub": "u", "chat": "c", "iat": 1000, "exp": 1060})

    def test_a_message_token_carries_the_message_and_the_mint_time_in_milliseconds(self):
        token = mint_embed_token(SECRET, "u", "c", 60, now=1000.4567, message_id="m-1")
        self.assertEqual(
            decode(token),
            {"sub": "u", "chat": "c", "msg": "m-1", "mts": 1000456, "iat": 1000, "exp": 1060},
        )

    def test_signs_the_reply_start_as_the_server_checks_it(self):
        # The same vector is checked by server/http/filter-route.test.ts against the server's own code.
        body = b'{"chatId":"c1","replyId":"m1","userId":"u1","startedAt":1700000000000}'
        self.assertEqual(
            sign_request(SECRET, body, now=1700000000),
            "t=1700000000,v1=1223c034bd677d30c2f59f00bed7d7ec6cab40f8105dd9b74f97b7bcfa0ed278",
        )


if __name__ == "__main__":
    unittest.main()
