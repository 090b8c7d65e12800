"""
title: OpenClaw Asks
description: Shows the OpenClaw agent's questions, secret requests and tool approvals for this chat as real cards, in a widget under each assistant message.
version: 0.1.0
license: MIT
"""

# An Open WebUI Filter function: paste this file into Admin Panel > Functions, enable it globally (or
# per model), and set the valves. After each assistant message it adds the OpenClaw Asks widget for
# the current chat as an embed, authenticated with a short-lived token minted for this user and chat.

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Awaitable, Callable, Optional
from urllib.parse import quote

from pydantic import BaseModel, Field


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint_embed_token(secret: str, user_id: str, chat_id: str, ttl_seconds: int, now: Optional[float] = None) -> str:
    """An HS256 JWT the OpenClaw Asks server accepts: `sub` is the user, `chat` limits it to one chat."""
    issued = int(now if now is not None else time.time())
    header = {"alg": "HS256", "typ": "JWT"}
    payload = {"sub": user_id, "chat": chat_id, "iat": issued, "exp": issued + ttl_seconds}
    signing_input = ".".join(
        _b64url(json.dumps(part, separators=(",", ":")).encode("utf-8")) for part in (header, payload)
    )
    signature = hmac.new(secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256).digest()
    return f"{signing_input}.{_b64url(signature)}"


def widget_url(base_url: str, chat_id: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/embed/chat/{quote(chat_id, safe='')}?token={token}"


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
        token_ttl_seconds: int = Field(default=12 * 3600, description="How long a widget token stays valid.")
        priority: int = Field(default=0, description="Filter order.")

    def __init__(self) -> None:
        self.valves = self.Valves()

    async def outlet(
        self,
        body: dict,
        __user__: Optional[dict] = None,
        __metadata__: Optional[dict] = None,
        __event_emitter__: Optional[Callable[[dict], Awaitable[Any]]] = None,
    ) -> dict:
        chat_id = (__metadata__ or {}).get("chat_id") or body.get("chat_id")
        user_id = (__user__ or {}).get("id")
        if not (chat_id and user_id and __event_emitter__):
            return body
        if len(self.valves.auth_secret) < 32:
            # Without the shared secret no token can be minted; say so once per message instead of failing the chat.
            await __event_emitter__(
                {"type": "status", "data": {"description": "OpenClaw Asks: set the auth_secret valve", "done": True}}
            )
            return body
        token = mint_embed_token(self.valves.auth_secret, user_id, chat_id, self.valves.token_ttl_seconds)
        await __event_emitter__({"type": "embeds", "data": {"embeds": [widget_url(self.valves.asks_url, chat_id, token)]}})
        return body
