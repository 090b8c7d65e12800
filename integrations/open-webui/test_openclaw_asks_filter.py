"""Unit tests of the Open WebUI filter, called the way Open WebUI calls it (no Open WebUI needed)."""

import asyncio
import base64
import hashlib
import hmac
import json
import sys
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


class OutletTest(unittest.TestCase):
    def run_outlet(self, valves: dict, metadata: dict | None, user: dict | None):
        events: list = []

        async def emit(event: dict) -> None:
            events.append(event)

        plugin = Filter()
        plugin.valves = Filter.Valves(**valves)
        body = {"messages": [{"role": "assistant", "content": "hi"}]}
        result = asyncio.run(plugin.outlet(body, __user__=user, __metadata__=metadata, __event_emitter__=emit))
        self.assertIs(result, body, "the message body passes through unchanged")
        return events

    def test_adds_the_widget_for_this_chat_with_a_token_for_this_user(self):
        events = self.run_outlet(
            {"asks_url": "https://asks.example.com/", "auth_secret": SECRET},
            {"chat_id": "chat/42", "message_id": "m1"},
            {"id": "user-7", "name": "Dana"},
        )
        self.assertEqual(len(events), 1)
        self.assertEqual(events[0]["type"], "embeds")
        url = urlparse(events[0]["data"]["embeds"][0])
        self.assertEqual((url.scheme, url.netloc, url.path), ("https", "asks.example.com", "/embed/chat/chat%2F42"))
        claims = decode(parse_qs(url.query)["token"][0])
        self.assertEqual((claims["sub"], claims["chat"]), ("user-7", "chat/42"))
        self.assertEqual(claims["exp"] - claims["iat"], 12 * 3600)

    def test_does_nothing_without_a_chat_or_user(self):
        self.assertEqual(self.run_outlet({"auth_secret": SECRET}, None, {"id": "u"}), [])
        self.assertEqual(self.run_outlet({"auth_secret": SECRET}, {"chat_id": "c"}, None), [])

    def test_asks_for_the_secret_instead_of_minting_a_weak_token(self):
        events = self.run_outlet({"auth_secret": "short"}, {"chat_id": "c"}, {"id": "u"})
        self.assertEqual([event["type"] for event in events], ["status"])

    def test_token_is_a_standard_hs256_jwt(self):
        token = mint_embed_token(SECRET, "u", "c", 60, now=1000)
        header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
        self.assertEqual(header, {"alg": "HS256", "typ": "JWT"})
        self.assertEqual(decode(token), {"sub": "u", "chat": "c", "iat": 1000, "exp": 1060})


if __name__ == "__main__":
    unittest.main()
