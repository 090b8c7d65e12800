"""
title: OpenClaw Asks
description: Shows the OpenClaw agent's questions, secret requests and tool approvals for this chat as real cards, in a widget above the reply being written.
version: 0.2.0
license: MIT
"""

# An Open WebUI Filter function: paste this file into Admin Panel > Functions, attach it to your
# OpenClaw models (or enable it globally and list them in `model_ids`), and set the valves. Before
# each reply starts, its inlet puts the OpenClaw Asks widget on that reply as an embed, so a question
# asked mid-run shows in the reply being written, even the first one of a new chat.
#
# Line numbers below are in open-webui 0.11.0 as installed from PyPI (backend package `open_webui`).

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Optional
from urllib.parse import quote

from pydantic import BaseModel, Field

EventEmitter = Callable[[dict], Awaitable[Any]]

# A reply's widget is sent again by the first streamed chunk this many seconds or more after its inlet
# (see `stream`), and once more by its outlet.
_SEND_AGAIN_AFTER_SECONDS = (0.0, 2.0)
# Replies whose outlet has not run yet; beyond this many the oldest are forgotten.
_REPLIES_KEPT = 256

# A channel's messages (chat id `channel:...`, utils/chat_id.py:6) get a channel emitter that has no
# `embeds` (socket/main.py:970), and they are no OpenClaw chat session.
_CHANNEL_PREFIX = "channel:"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint_embed_token(
    secret: str,
    user_id: str,
    chat_id: str,
    ttl_seconds: int,
    now: Optional[float] = None,
    message_id: Optional[str] = None,
) -> str:
    """An HS256 JWT the OpenClaw Asks server accepts.

    `sub` is the user and `chat` limits it to one chat. `msg` binds it to one assistant message and
    `mts` (mint time in milliseconds) orders the replies of a chat: `iat` has whole seconds only, and
    two turns can start within one second.
    """
    now_seconds = now if now is not None else time.time()
    issued = int(now_seconds)
    header = {"alg": "HS256", "typ": "JWT"}
    payload: dict = {"sub": user_id, "chat": chat_id}
    if message_id is not None:
        payload["msg"] = message_id
        payload["mts"] = int(now_seconds * 1000)
    payload.update({"iat": issued, "exp": issued + ttl_seconds})
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode("utf-8")) for part in (header, payload)
    )
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64url(signature)}"


def widget_url(base_url: str, chat_id: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/embed/chat/{quote(chat_id, safe='')}?token={token}"


@dataclass
class _SentWidget:
    event: dict
    sent_at: float
    # Seconds after `sent_at` from which a streamed chunk sends the widget again, soonest first.
    send_again_after: list[float]


def parse_model_ids(text: str) -> set[str]:
    return {part.strip() for part in text.split(",") if part.strip()}


class Filter:
    class Valves(BaseModel):
        asks_url: str = Field(
            default="http://127.0.0.1:3000",
            description="Where OpenClaw Asks is served, as the browser reaches it.",
        )
        auth_secret: str = Field(
            default="",
            description="The OpenClaw Asks AUTH_SECRET (at least 32 characters).",
        )
        # A comma-separated string rather than a list: Open WebUI's valves form edits strings, numbers
        # and booleans.
        model_ids: str = Field(
            default="",
            description="Comma-separated ids of the OpenClaw models to add the widget to; empty means every model.",
        )
        # An ask_user waits at most 1 hour, an approval 10 minutes, a text prompt 4 minutes; the token must
        # outlive its reply's run by that much. It is also how long a shared copy of the chat can answer.
        token_ttl_seconds: int = Field(
            default=24 * 3600,
            description="How long a widget token stays valid (also how long a shared copy of the chat can answer in your place).",
        )
        priority: int = Field(default=0, description="Filter order.")

    def __init__(self) -> None:
        self.valves = self.Valves()
        # Open WebUI keeps one instance per function while its code is unchanged (utils/plugin.py:399-409),
        # and a reply's inlet, stream and outlet run in the same process.
        self._sent: dict[str, _SentWidget] = {}
        self.clock: Callable[[], float] = time.monotonic

    def _acts_on(self, model_id: Optional[str]) -> bool:
        wanted = parse_model_ids(self.valves.model_ids)
        return not wanted or model_id in wanted

    # Open WebUI calls this before the model, passing each argument by name only if the signature
    # declares it (utils/filter.py:123 get_filter_params; `body` is the request, `__metadata__`,
    # `__event_emitter__`, `__model__`, `__user__` come from utils/middleware.py:2401-2411). An exception
    # here fails the whole chat request (utils/filter.py:190), so every missing piece means "do nothing".
    async def inlet(
        self,
        body: dict,
        __user__: Optional[dict] = None,
        __metadata__: Optional[dict] = None,
        __event_emitter__: Optional[EventEmitter] = None,
        __model__: Optional[dict] = None,
    ) -> dict:
        metadata = __metadata__ or {}
        # Background tasks (title, tags, follow-ups, memory review, ...) carry `task`: no reply to put a widget on.
        if metadata.get("task"):
            return body
        model_id = (__model__ or {}).get("id") or body.get("model")
        if not self._acts_on(model_id):
            return body
        # The server sets these (main.py:1180-1212 the chat, main.py:1716-1719 the assistant message of this
        # model's run), and the emitter is bound to exactly that message (middleware.py:2398
        # get_event_emitter(metadata)). The client's body is not trusted for them.
        chat_id = metadata.get("chat_id")
        message_id = metadata.get("message_id")
        user_id = (__user__ or {}).get("id")
        if not (chat_id and message_id and user_id and __event_emitter__) or chat_id.startswith(_CHANNEL_PREFIX):
            return body
        if len(self.valves.auth_secret) < 32:
            # Without the shared secret no token can be minted; say so on the reply instead of failing the chat.
            await __event_emitter__(
                {"type": "status", "data": {"description": "OpenClaw Asks: set the auth_secret valve", "done": True}}
            )
            return body
        token = mint_embed_token(
            self.valves.auth_secret, user_id, chat_id, self.valves.token_ttl_seconds, message_id=message_id
        )
        # `replace`: the message's embeds become exactly this widget, in the database and in open tabs
        # (socket/main.py:1036-1050); Continue re-runs the same message and must not stack a second one.
        event = {"type": "embeds", "data": {"embeds": [widget_url(self.valves.asks_url, chat_id, token)], "replace": True}}
        await __event_emitter__(event)
        self._sent.pop(message_id, None)
        self._sent[message_id] = _SentWidget(event, self.clock(), list(_SEND_AGAIN_AFTER_SECONDS))
        while len(self._sent) > _REPLIES_KEPT:
            self._sent.pop(next(iter(self._sent)))
        return body

    # In a brand-new chat the tab learns the chat id only from the HTTP answer to its request
    # (src/lib/components/chat/Chat.svelte:3235-3236) and drops events for any other chat id (line 952),
    # while the inlet runs in a task started before that answer (main.py:1751-1756): the inlet's embed
    # is stored, but the open tab missed it in 1 of 5 new chats against open-webui 0.11.0. Streamed chunks come
    # later, after a round trip to the model, so the same event sent again with the first chunk, and
    # with the first one 2 s later, reaches the tab. It carries the same URL, so a tab that already
    # shows the widget keeps its iframe as it is.
    async def stream(self, event: dict, __metadata__: Optional[dict] = None, __event_emitter__: Optional[EventEmitter] = None) -> dict:
        sent = self._sent.get((__metadata__ or {}).get("message_id") or "")
        if sent and __event_emitter__ and sent.send_again_after and self.clock() - sent.sent_at >= sent.send_again_after[0]:
            sent.send_again_after.pop(0)
            await __event_emitter__(sent.event)
        return event

    # Once more when the reply is finished (utils/middleware.py:3505-3521), for a reply that did not
    # stream or a tab that was slower still; then the reply is forgotten.
    async def outlet(self, body: dict, __metadata__: Optional[dict] = None, __event_emitter__: Optional[EventEmitter] = None) -> dict:
        sent = self._sent.pop((__metadata__ or {}).get("message_id") or "", None)
        if sent and __event_emitter__:
            await __event_emitter__(sent.event)
        return body
