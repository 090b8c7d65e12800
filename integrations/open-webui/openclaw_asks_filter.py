"""
title: OpenClaw Asks
description: Shows the OpenClaw agent's questions, secret requests and tool approvals for this chat as real cards, in a widget above the reply being written, and keeps its text prompts out of the reply.
version: 0.6.1
license: MIT
"""

# An Open WebUI Filter function: paste this file into Admin Panel > Functions and set its two valves
# `asks_url` and `auth_secret`. It acts on OpenClaw's models (ids `openclaw`, `openclaw/<agent>`, as the
# Gateway's OpenAI-compatible endpoint lists them, and any other id starting with `openclaw`), or on
# those listed in `model_ids`. For each reply it:
# - names the reply's Gateway session (`user` = `openwebui:<chat>:<reply>`), so an ask raised by the
#   reply's run is shown in the reply's own widget; every other request on the model (a background task,
#   a temporary chat, an API call with no chat) gets a fresh session OpenClaw Asks knows no reply start
#   vouches for (`openwebui-unvouched:<uuid>`), so no `user` of the caller's own ever reaches the Gateway;
# - tells OpenClaw Asks, server to server, whose chat it is and which reply starts, before the request
#   goes to the model (a guest's approvals and secret requests are then refused at once);
# - puts the OpenClaw Asks widget on the reply, as an embed, and tells it the theme chosen in Open WebUI;
# - hands the reply's act token (approving and entering secrets need it) to the reply's user's tabs only, never
#   through the chat, whose stored widget URL every share copies;
# - keeps a text prompt's trigger (`OpenClaw needs input:`) out of the reply: the question stays as text;
# - tells OpenClaw Asks the chat's title, so its dashboard names chats as Open WebUI does.
#
# Line numbers below are in open-webui 0.11.0 as installed from PyPI (backend package `open_webui`).

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import re
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

EventEmitter = Callable[[dict], Awaitable[Any]]

# A reply's widget is sent again this many seconds after its inlet: a brand-new chat's tab learns its
# chat id only from the answer to its request and drops events for other chats until then (see
# `_send_again`), and an agent that asks first streams no text meanwhile.
SEND_AGAIN_AFTER_SECONDS = (0.5, 1.0, 2.0, 4.0, 8.0)
# A brand-new chat's first reply that ended this soon after its start may have ended before its tab knew
# the chat (see `_catch_up`): its end is sent again this many seconds after the outlet.
CATCH_UP_WITHIN_SECONDS = 5.0
CATCH_UP_AFTER_SECONDS = (1.5, 4.0)
# Replies whose outlet has not run yet; beyond this many the oldest are forgotten.
_REPLIES_KEPT = 256
# OpenClaw Asks answers a filter's call with a few hundred bytes.
_MAX_ANSWER_BYTES = 64 * 1024
# How long the inlet waits for OpenClaw Asks to take the reply's start before it goes on without it.
_REPLY_START_TIMEOUT_SECONDS = 3.0
# A chat gets its title after its first reply (Open WebUI's title task runs once the outlet is done,
# utils/middleware.py:3301-3355): looked for this many seconds after the outlet.
TITLE_LOOKS_AFTER_SECONDS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
# Open WebUI's title of a chat that has none yet (models/chats.py).
_UNTITLED = "New Chat"
# The server refuses a shorter AUTH_SECRET (server/auth/secret.ts), so no token minted with one works.
_MIN_AUTH_SECRET_LENGTH = 32

# The Open WebUI release lines this filter is built and tested on (the README's supported releases).
SUPPORTED_RELEASES = ("0.11", "0.12")

# Open WebUI's built-in tools that share a name with a tool of the Gateway's own, which its `/v1` refuses.
GATEWAY_OWN_TOOL_NAMES = frozenset({"ask_user"})
# Chats Open WebUI does not save (utils/chat_id.py): a channel's messages, whose emitter has no `embeds`
# (socket/main.py:970), and temporary chats, which no later page load can show again.
_UNSAVED_CHAT_PREFIXES = ("channel:", "temporary:", "local:")
# `openclaw`, `openclaw/<agent>`, `openclaw:<agent>`, a Pipe's `openclaw_pipe.<agent>`..., after a
# connection's optional `<prefix>.` (Open WebUI's prefix_id).
_OPENCLAW_MODEL = re.compile(r"^(?:[^/]+\.)?openclaw(?:$|[/:._-])")


# ---------------------------------------------------------------------------------------------------
# Text prompts: the rules of lib/prompts in the OpenClaw Asks repository (scanner.ts, repeats.ts,
# phrases.ts, fallback.ts, form.ts, options.ts), for replies streamed as deltas. Both sides run the
# table of cases in test/fixtures/text-prompts.json.
# ---------------------------------------------------------------------------------------------------

TRIGGER_PHRASES = ("OpenClaw needs input:", "Codex needs input:")
_PHRASE_BY_FIRST_CHAR = {phrase[0]: phrase for phrase in TRIGGER_PHRASES}
_MAX_TRIGGER_INDENT = 3
_MIN_FENCE_LENGTH = 3
_LINE_START, _TRIGGER_PREFIX, _FENCE_RUN, _FENCE_OPENING, _FENCE_CLOSING, _PLAIN = range(6)


class PromptScanner:
    """Finds the text prompt of one streamed reply and says what of it is safe to show.

    Everything before the trigger line is released as soon as it cannot be part of a trigger (held
    back is only the start of a line that could still spell `   OpenClaw needs input:` outside code);
    from the trigger line on, nothing until `end()`. Only the concatenated text matters, never how it
    was chunked.
    """

    def __init__(self) -> None:
        # Only the part of the reply still needed is kept (`_tail`, from offset `_tail_start` on):
        # appending each chunk to the whole reply would copy all of it every time. Every other
        # position here is an offset in the whole reply, `_length` long so far.
        self._tail = ""
        self._tail_start = 0
        self._length = 0
        # Chunks pushed once the prompt is found: nothing of them is released before `end()`, which
        # joins them (appending to the tail would copy the growing prompt on every chunk).
        self._held: list[str] = []
        self._released = 0
        self._ended = False
        self._line_start = 0
        self._state = _LINE_START
        self._indent = 0
        self._phrase = ""
        self._matched = 0
        self._run_char = ""
        self._run_length = 0
        self._fence: tuple[str, int] | None = None
        self._prompt_start = -1
        self._trigger_end = -1

    def push(self, delta: str) -> str:
        """Feeds the next part of the reply; returns the text that is now safe to show."""
        offset = self._length
        self._length += len(delta)
        if self._prompt_start < 0:
            self._tail += delta
            self._scan(offset)
        else:
            self._held.append(delta)
        return self._release(self._safe_end())

    def end(self) -> tuple[str, str | None, str]:
        """The reply ended: the rest of the text before the prompt, the prompt (or None), and the text shown after it."""
        self._ended = True
        if self._prompt_start < 0:
            return self._release(self._length), None, ""
        before = self._release(self._prompt_start)
        self._tail += "".join(self._held)
        self._held = []
        base = self._tail_start
        prompt, after = separate_repeats(
            self._tail,
            self._prompt_start - base,
            _phrase_starts(self._tail, self._trigger_end - base),
        )
        return before, prompt, after

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def started(self) -> bool:
        """Whether any text was pushed."""
        return self._length > 0

    def _line_may_be_trigger(self) -> bool:
        return self._fence is None and self._state in (_LINE_START, _TRIGGER_PREFIX)

    def _safe_end(self) -> int:
        if self._prompt_start >= 0:
            return self._prompt_start
        return self._line_start if self._line_may_be_trigger() else self._length

    def _release(self, end: int) -> str:
        text = ""
        if end > self._released:
            text = self._tail[self._released - self._tail_start : end - self._tail_start]
            self._released = end
        # Still needed: what is not released, and the prompt or the line that may yet start one
        # (released already when `end()` came before the rest of its line was pushed).
        keep = self._released
        if self._prompt_start >= 0:
            keep = min(keep, self._prompt_start)
        elif self._line_may_be_trigger():
            keep = min(keep, self._line_start)
        if keep > self._tail_start:
            self._tail = self._tail[keep - self._tail_start :]
            self._tail_start = keep
        return text

    def _scan(self, start: int) -> None:
        # `i` indexes the tail; `base + i` is the same position in the whole reply.
        text = self._tail
        base = self._tail_start
        i = start - base
        while i < len(text):
            if self._state == _PLAIN:
                newline = text.find("\n", i)
                if newline < 0:
                    return
                i = newline
            char = text[i]
            if char == "\n":
                self._end_line(base + i)
            elif self._step(char):
                self._prompt_start = self._line_start
                self._trigger_end = base + i + 1
                return
            i += 1

    def _step(self, char: str) -> bool:
        state = self._state
        if state == _LINE_START:
            self._step_line_start(char)
        elif state == _TRIGGER_PREFIX:
            if char != self._phrase[self._matched]:
                self._state = _PLAIN
                return False
            self._matched += 1
            return self._matched == len(self._phrase)
        elif state == _FENCE_RUN:
            self._step_fence_run(char)
        elif state == _FENCE_OPENING:
            # CommonMark: a backtick fence's info string may not contain a backtick.
            if self._run_char == "`" and char == "`":
                self._state = _PLAIN
        elif state == _FENCE_CLOSING:
            if char not in " \t\r":
                self._state = _PLAIN
        return False

    def _step_line_start(self, char: str) -> None:
        if char == " ":
            if self._indent < _MAX_TRIGGER_INDENT:
                self._indent += 1
            else:
                self._state = _PLAIN  # a 4th space: indented code
            return
        if self._fence is not None:
            # Inside a fence only its closing line matters.
            if char == self._fence[0]:
                self._start_fence_run(char)
            else:
                self._state = _PLAIN
            return
        phrase = _PHRASE_BY_FIRST_CHAR.get(char)
        if phrase is not None:
            self._phrase = phrase
            self._matched = 1
            self._state = _TRIGGER_PREFIX
        elif char in "`~":
            self._start_fence_run(char)
        else:
            self._state = _PLAIN  # text, a tab (indented code), anything else

    def _start_fence_run(self, char: str) -> None:
        self._run_char = char
        self._run_length = 1
        self._state = _FENCE_RUN

    def _step_fence_run(self, char: str) -> None:
        if char == self._run_char:
            self._run_length += 1
        elif self._fence is None:
            self._state = _FENCE_OPENING if self._run_length >= _MIN_FENCE_LENGTH else _PLAIN
        else:
            closes = self._run_length >= self._fence[1] and char in " \t\r"
            self._state = _FENCE_CLOSING if closes else _PLAIN

    def _end_line(self, newline_at: int) -> None:
        is_fence_line = self._state in (_FENCE_OPENING, _FENCE_CLOSING)
        if self._state == _FENCE_RUN:
            is_fence_line = self._run_length >= (
                self._fence[1] if self._fence else _MIN_FENCE_LENGTH
            )
        if is_fence_line:
            self._fence = (self._run_char, self._run_length) if self._fence is None else None
        self._line_start = newline_at + 1
        self._state = _LINE_START
        self._indent = 0


def _phrase_starts(text: str, start: int) -> list[int]:
    """Where a trigger phrase starts anywhere in `text[start:]` (inside a prompt a second one ends it, even mid-line)."""
    starts: list[int] = []
    position = start
    while True:
        found = [
            (index, phrase)
            for phrase in TRIGGER_PHRASES
            if (index := text.find(phrase, position)) >= 0
        ]
        if not found:
            return starts
        index, phrase = min(found)
        starts.append(index)
        position = index + len(phrase)


def question_body(prompt: str) -> str:
    """What follows a prompt's trigger phrase (the trigger line's indentation ignored)."""
    match = re.search(r"\S", prompt)
    if not match:
        return ""
    start = match.start()
    for phrase in TRIGGER_PHRASES:
        if prompt.startswith(phrase, start):
            return prompt[start + len(phrase) :]
    return prompt[start:]


def collapse_whitespace(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def separate_repeats(text: str, prompt_start: int, phrase_starts: list[int]) -> tuple[str, str]:
    """The prompt, and what is shown after it: a repeat of a question is dropped, a different one kept as text."""
    bounds = [prompt_start, *phrase_starts, len(text)]
    prompt = text[prompt_start : bounds[1]]
    seen = {collapse_whitespace(question_body(prompt))}
    shown = []
    for index in range(1, len(bounds) - 1):
        segment = text[bounds[index] : bounds[index + 1]]
        question = collapse_whitespace(question_body(segment))
        if question in seen:
            continue
        seen.add(question)
        shown.append(segment)
    return prompt, "".join(shown)


_FENCED_BLOCK = re.compile(r"(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:\n[ \t]*\1[`~]*[ \t]*(?:\n|\Z)|\Z)")
_MAX_FORM_QUESTIONS = 3


def _form_option(option: Any) -> dict | None:
    if isinstance(option, str):
        return {"label": option.strip()} if option.strip() else None
    if not isinstance(option, dict):
        return None
    label, description = option.get("label"), option.get("description")
    if not isinstance(label, str) or not label.strip():
        return None
    if description is None:
        return {"label": label.strip()}
    if not isinstance(description, str):
        return None
    return (
        {"label": label.strip(), "description": description.strip()}
        if description.strip()
        else {"label": label.strip()}
    )


def _form_question(item: Any) -> dict | None:
    if not isinstance(item, dict):
        return None
    header, question = item.get("header", ""), item.get("question")
    options, multi_select = item.get("options", []), item.get("multiSelect", False)
    if not isinstance(question, str) or not question.strip():
        return None
    if (
        not isinstance(header, str)
        or not isinstance(multi_select, bool)
        or not isinstance(options, list)
    ):
        return None
    parsed = []
    seen = set()
    for option in options:
        result = _form_option(option)
        if result is None:
            return None
        key = collapse_whitespace(result["label"]).lower()
        if key not in seen:
            seen.add(key)
            parsed.append(result)
    return {
        "header": header.strip(),
        "question": question.strip(),
        "multiSelect": multi_select,
        "options": parsed,
    }


def parse_form(body: str) -> list[dict] | None:
    """The questions of a JSON form prompt body (`{"questions": [...]}`, 1-3 valid ones), bare or fenced; None otherwise."""
    candidates = []
    fenced = _FENCED_BLOCK.search(body)
    if fenced:
        candidates.append(fenced.group(2))
    start, end = body.find("{"), body.rfind("}")
    if start >= 0 and end > start:
        candidates.append(body[start : end + 1])
    for candidate in candidates:
        try:
            parsed = json.loads(candidate)
        except ValueError:
            continue
        items = parsed.get("questions") if isinstance(parsed, dict) else None
        if not isinstance(items, list) or not 1 <= len(items) <= _MAX_FORM_QUESTIONS:
            continue
        questions = [_form_question(item) for item in items]
        if all(question is not None for question in questions):
            return questions
    return None


# After a multiple-choice question left in the reply as text; the server's words (lib/wording.ts
# FORM_AS_TEXT), pinned by test/fixtures/wording.json.
MULTI_SELECT_NOTE = " (select all that apply)"


def prompt_fallback_text(prompt: str) -> str:
    """The prompt as reply text: the trigger phrase removed, a JSON form as its numbered questions."""
    body = question_body(prompt)
    form = parse_form(body)
    if form is None:
        return re.sub(r"^\s*\n|^[ \t]+", "", body, count=1).rstrip()
    lines = []
    for index, question in enumerate(form, start=1):
        title = (
            question["question"]
            if question["header"] == ""
            else f"{question['header']}: {question['question']}"
        )
        multi = MULTI_SELECT_NOTE if question["multiSelect"] else ""
        lines.append(f"{index}. {title}{multi}")
        for option in question["options"]:
            described = f" ({option['description']})" if "description" in option else ""
            lines.append(f"   - {option['label']}{described}")
    return "\n".join(lines)


def visible_reply(text: str) -> str:
    """A whole reply as it is shown: its text prompt's trigger removed, the question kept as text."""
    scanner = PromptScanner()
    return scanner.push(text) + _finish(scanner)


def _finish(scanner: PromptScanner) -> str:
    before, prompt, after = scanner.end()
    if prompt is None:
        return before + after
    # The line break that ended the prompt still separates it from a later question shown as text.
    return before + prompt_fallback_text(prompt) + prompt[len(prompt.rstrip()) :] + after


# ---------------------------------------------------------------------------------------------------
# Tokens and the server-to-server call
# ---------------------------------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def mint_embed_token(
    secret: str,
    user_id: str,
    chat_id: str,
    ttl_seconds: int,
    now: float | None = None,
    message_id: str | None = None,
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
        _b64url(json.dumps(part, separators=(",", ":")).encode("utf-8"))
        for part in (header, payload)
    )
    signature = hmac.new(
        secret.encode("utf-8"), signing_input.encode("ascii"), hashlib.sha256
    ).digest()
    return f"{signing_input}.{_b64url(signature)}"


def widget_url(base_url: str, chat_id: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/embed/chat/{quote(chat_id, safe='')}?token={token}"


# Open WebUI keeps the theme a person chose in its own page (`localStorage.theme`; the `dark` class on
# its root, index.html and chat/Settings/General.svelte) and tells its embeds nothing, while the
# widget's frame sees only the system's `prefers-color-scheme`: with Dark chosen on a light system the
# cards were white boxes on a dark page. This relay runs in Open WebUI's page (the `execute` event,
# Chat.svelte:1765-1776 in 0.12.4, in 0.11.0 too) and posts the theme, one word, to the widget's frames
# of `origin`: now, when one of them asks, and on each change of the root's class. It is installed
# once per page; it reads nothing else and the frames can make it do nothing else.
THEME_RELAY_JS = """\
const origin = %s;
const theme = () => (document.documentElement.classList.contains("dark") ? "dark" : "light");
const widgets = () =>
  [...document.querySelectorAll("iframe")].filter((f) => (f.src || "").startsWith(origin + "/"));
const tell = (target) => target.postMessage({ type: "openclaw-asks:theme", theme: theme() }, "*");
const tellAll = () => widgets().forEach((f) => f.contentWindow && tell(f.contentWindow));
if (!window.__openclawAsksThemeRelay) {
  window.__openclawAsksThemeRelay = true;
  window.addEventListener("message", (event) => {
    const asked = event.data && event.data.type === "openclaw-asks:theme?";
    if (asked && widgets().some((f) => f.contentWindow === event.source)) tell(event.source);
  });
  new MutationObserver(tellAll).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["class"],
  });
}
tellAll();
"""


def widget_origin(base_url: str) -> str:
    """The widget frames' origin, as a JS string: the relays post only to frames whose URL starts with it."""
    parts = urlsplit(base_url)
    return json.dumps(f"{parts.scheme}://{parts.netloc}")


def theme_relay_event(base_url: str) -> dict:
    """The event that runs THEME_RELAY_JS in the tab showing the chat (no reply is awaited)."""
    return {"type": "execute", "data": {"code": THEME_RELAY_JS % widget_origin(base_url)}}


# The widget's URL (its token) is stored on the message and copied into every share of the chat, so it
# never approves a tool call or enters a secret; that needs the reply's act token, which OpenClaw Asks gives the
# filter for the reply's user when the reply starts (docs/SECURITY.md#a-stored-token-never-acts). This
# relay keeps it in the memory of the page that sent the message and of that user's other tabs showing
# the chat (the emitter's `execute` goes to the room of the reply's user only, socket/main.py:1448-1460
# in 0.12.4, and no share or collaborator gets it: it is not one of the shared events, :1466-1477), and
# posts it to that reply's widget frame: now, and when the frame asks. Nothing of it is saved.
ACT_RELAY_JS = """\
const origin = %s;
const acts = (window.__openclawAsksActs = window.__openclawAsksActs || new Map());
acts.set(%s, %s);
const widgets = () =>
  [...document.querySelectorAll("iframe")].filter((f) => (f.src || "").startsWith(origin + "/"));
const tell = (target, msg) =>
  acts.has(msg) && target.postMessage({ type: "openclaw-asks:act", msg, token: acts.get(msg) }, "*");
if (!window.__openclawAsksActRelay) {
  window.__openclawAsksActRelay = true;
  window.addEventListener("message", (event) => {
    const data = event.data;
    const asked = data && data.type === "openclaw-asks:act?" && typeof data.msg === "string";
    if (asked && widgets().some((f) => f.contentWindow === event.source)) tell(event.source, data.msg);
  });
}
for (const frame of widgets()) if (frame.contentWindow) tell(frame.contentWindow, %s);
"""


def act_relay_event(base_url: str, message_id: str, act_token: str) -> dict:
    """The event that hands the reply's act token to the reply user's tabs showing the chat (ACT_RELAY_JS)."""
    msg = json.dumps(message_id)
    code = ACT_RELAY_JS % (widget_origin(base_url), msg, json.dumps(act_token), msg)
    return {"type": "execute", "data": {"code": code}}


def reply_session_user(chat_id: str, message_id: str) -> str:
    """The OpenAI `user` of a reply: the Gateway runs it in session `agent:<agent>:openai-user:openwebui:<chat>:<reply>`."""
    return f"openwebui:{chat_id}:{message_id}"


# The prefix of a session no reply start vouches for: OpenClaw Asks maps it to no chat, and refuses its
# approvals and secret requests (docs/SECURITY.md#whose-run-asks).
UNVOUCHED_PREFIX = "openwebui-unvouched:"


def unvouched_session_user() -> str:
    """A fresh `user` for a request that is no reply of a saved chat: a session of its own, vouched by nobody."""
    return f"{UNVOUCHED_PREFIX}{uuid.uuid4()}"


# The server takes ids of at most this many characters, and shows names of at most this many
# (server/http/filter-route.ts).
_MAX_ID_LENGTH = 200
_MAX_NAME_LENGTH = 80


def reply_id(message_id: str) -> str:
    """The reply's id as OpenClaw Asks sees it: `:` and `%` percent-encoded, since the session key separates chat and reply with `:`."""
    return message_id.replace("%", "%25").replace(":", "%3A")


def filter_key(secret: str) -> bytes:
    """The key the filter signs its calls with: derived from the shared secret, never a tab token's key."""
    return hmac.new(
        secret.encode("utf-8"), b"openclaw-asks open-webui filter v1", hashlib.sha256
    ).digest()


def sign_request(secret: str, body: bytes, now: float | None = None) -> str:
    """`X-OpenClaw-Asks-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`."""
    t = int(now if now is not None else time.time())
    signature = hmac.new(
        filter_key(secret), f"{t}.".encode("ascii") + body, hashlib.sha256
    ).hexdigest()
    return f"t={t},v1={signature}"


# Server to server: no proxy from the environment (as aiohttp, which Open WebUI uses, by default).
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def post_signed(base_url: str, route: str, secret: str, payload: dict, timeout: float) -> dict:
    """`POST /openwebui/replies` (whose chat it is, which reply starts) or `/openwebui/titles`: the answer's JSON. Raises on any failure."""
    body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}{route}",
        data=body,
        method="POST",
        headers={
            "content-type": "application/json",
            "x-openclaw-asks-signature": sign_request(secret, body),
        },
    )
    try:
        with _DIRECT.open(request, timeout=timeout) as response:
            raw = response.read(_MAX_ANSWER_BYTES)
    except urllib.error.HTTPError as error:
        error.close()
        raise
    try:
        answer = json.loads(raw)
    except ValueError:
        # Taken all the same (an answer that says nothing more than its status).
        return {}
    return answer if isinstance(answer, dict) else {}


async def open_webui_chat_title(chat_id: str) -> str | None:
    """The chat's title in Open WebUI's database (this runs inside Open WebUI), or None while it has none."""
    try:
        from open_webui.models.chats import Chats  # noqa: PLC0415 - only inside Open WebUI
    except ImportError:
        return None
    title = await Chats.get_chat_title_by_id(chat_id)
    return title if isinstance(title, str) and title.strip() and title != _UNTITLED else None


async def open_webui_quiet_emitter(metadata: dict) -> EventEmitter | None:
    """An emitter to the reply's user's tabs that writes nothing into the chat (inside Open WebUI), or None.

    The filter's own emitter stores each embeds event in the chat (socket/main.py:1036-1054 in 0.11.0) by
    reading and writing the chat's whole record: after the outlet that write can race Open WebUI's own
    write of the person's next message, and lose it.
    """
    try:
        from open_webui.socket.main import get_event_emitter  # noqa: PLC0415 - only inside Open WebUI
    except ImportError:
        return None
    return await get_event_emitter(metadata, update_db=False)


def open_webui_version() -> str | None:
    """The running Open WebUI's version (open_webui/env.py VERSION, 0.11.0 and 0.12.4), or None outside it."""
    try:
        from open_webui.env import VERSION  # noqa: PLC0415 - only inside Open WebUI
    except ImportError:
        return None
    return VERSION if isinstance(VERSION, str) else None


# The first release whose tab takes a brand-new chat's id from the first event of its messages
# (CHANGELOG 0.12.4 "Early updates in new chats", chat/Chat.svelte:1491-1494); before it the tab drops
# every event until the HTTP answer tells it the chat's id (0.11.0 chat/Chat.svelte:952).
_NEW_CHAT_EVENTS_REACH_THE_TAB = (0, 12, 4)


def tab_may_miss_new_chat_events(version: str | None) -> bool:
    """Whether a tab of Open WebUI `version` may miss the first events of a brand-new chat (unknown: it may)."""
    parts = len(_NEW_CHAT_EVENTS_REACH_THE_TAB)
    numbers = re.findall(r"\d+", version or "")[:parts]
    return len(numbers) < parts or tuple(map(int, numbers)) < _NEW_CHAT_EVENTS_REACH_THE_TAB


def unsupported_release(version: str | None) -> str | None:
    """One line for Open WebUI's log when `version` is not a supported release, else None."""
    if version is None or any(version.startswith(f"{line}.") for line in SUPPORTED_RELEASES):
        return None
    lines = ", ".join(f"{line}.x" for line in SUPPORTED_RELEASES)
    return f"OpenClaw Asks supports Open WebUI {lines}; this is {version}: its cards may not show"


async def open_webui_chat_owner(chat_id: str) -> str | None:
    """The chat's user as Open WebUI records it (this runs inside Open WebUI), or None outside it.

    One column read, as models/chats.py reads a title (0.11.0 and 0.12.4 alike): in a shared chat a guest's
    reply must not make the guest its owner.
    """
    try:
        from open_webui.internal.db import get_async_db_context  # noqa: PLC0415 - only inside Open WebUI
        from open_webui.models.chats import Chat  # noqa: PLC0415
        from sqlalchemy import select  # noqa: PLC0415
    except ImportError:
        return None
    async with get_async_db_context() as session:
        row = (await session.execute(select(Chat.user_id).filter_by(id=chat_id))).first()
    return row[0] if row is not None and isinstance(row[0], str) and row[0] else None


def parse_model_ids(text: str) -> set[str]:
    return {part.strip() for part in text.split(",") if part.strip()}


def is_openclaw_model(model_id: str | None) -> bool:
    return bool(model_id) and _OPENCLAW_MODEL.match(model_id) is not None


async def _after_each(times: tuple[float, ...]) -> AsyncIterator[None]:
    """Sleeps until each of `times` (seconds from the first step) and yields there; a cancel is raised in the sleep."""
    waited = 0.0
    for at in times:
        await asyncio.sleep(at - waited)
        waited = at
        yield


@dataclass
class _Reply:
    """What the filter keeps of a reply between its inlet and its outlet."""

    event: dict
    chat_id: str
    # The chat's title when the reply started (None: it had none yet).
    title: str | None
    scanner: PromptScanner = field(default_factory=PromptScanner)
    # When the inlet ran (time.time()).
    started: float = 0.0
    # Sending the widget again is for a tab that may have missed it (`_send_again`), and only then: each
    # embeds event makes the tab scroll the widget into view, under a person's pointer.
    send_again: asyncio.Task | None = None
    # The reply's act token for its user's tabs (ACT_RELAY_JS), once OpenClaw Asks gave one.
    act_event: dict | None = None

    def events(self) -> list[dict]:
        """What a tab that missed the inlet's events is sent again: the widget, and its act token."""
        return [self.event] + ([self.act_event] if self.act_event else [])


class Filter:
    class Valves(BaseModel):
        asks_url: str = Field(
            "http://127.0.0.1:3000",
            description="Where OpenClaw Asks is served, as the browser reaches it.",
        )
        auth_secret: str = Field(
            "",
            description="The filter's secret from OpenClaw Asks: npm run connect-openwebui sets it, npm run filter-secret prints it. Not AUTH_SECRET itself.",
        )
        server_url: str = Field(
            "",
            description="Where Open WebUI's server reaches OpenClaw Asks, when not at asks_url (e.g. from inside a container).",
        )
        # A comma-separated string rather than a list: Open WebUI's valves form edits strings, numbers
        # and booleans.
        model_ids: str = Field(
            "",
            description="Comma-separated ids of the models to act on; empty means OpenClaw's models (ids starting with openclaw).",
        )
        # An ask_user waits at most 1 hour, an approval 10 minutes, a text prompt 4 minutes; the token must
        # outlive its reply's run by that much. It is also how long a shared copy of the chat shows what is
        # pending (and can answer its questions; never an approval or a secret).
        token_ttl_seconds: int = Field(
            24 * 3600,
            description="How long a widget token stays valid (also how long a shared copy of the chat shows what is pending there and can answer its questions).",
        )
        priority: int = Field(0, description="Filter order.")

    def __init__(self) -> None:
        self.valves = self.Valves()
        # Open WebUI keeps one instance per function while its code is unchanged (utils/plugin.py:399-409),
        # and a reply's inlet, stream and outlet run in the same process.
        self._replies: dict[str, _Reply] = {}
        self.send_again_after: tuple[float, ...] = SEND_AGAIN_AFTER_SECONDS
        self.title_looks_after: tuple[float, ...] = TITLE_LOOKS_AFTER_SECONDS
        self.catch_up_after: tuple[float, ...] = CATCH_UP_AFTER_SECONDS
        self.quiet_emitter: Callable[[dict], Awaitable[EventEmitter | None]] = (
            open_webui_quiet_emitter
        )
        self.chat_title: Callable[[str], Awaitable[str | None]] = open_webui_chat_title
        self.chat_owner: Callable[[str], Awaitable[str | None]] = open_webui_chat_owner
        # The title watches still running (a task only the event loop holds may be collected).
        self._title_watches: set[asyncio.Task] = set()
        # Each chat's catch-up still running (`_catch_up`), by chat id.
        self._catch_ups: dict[str, asyncio.Task] = {}
        # Once per load of the function (it is loaded again when its code changes).
        version = open_webui_version()
        self.tab_may_miss_new_chat_events = tab_may_miss_new_chat_events(version)
        warning = unsupported_release(version)
        if warning:
            log.warning(warning)

    def _acts_on(self, model: dict | None, body: dict) -> bool:
        model = model or {}
        ids = [model.get("id") or body.get("model"), (model.get("info") or {}).get("base_model_id")]
        wanted = parse_model_ids(self.valves.model_ids)
        return any(
            (model_id in wanted) if wanted else is_openclaw_model(model_id)
            for model_id in ids
            if model_id
        )

    # Open WebUI calls this before the model, passing each argument by name only if the signature
    # declares it (utils/filter.py:123 get_filter_params; `body` is the request, `__metadata__`,
    # `__event_emitter__`, `__model__`, `__user__` come from utils/middleware.py:2401-2411). An exception
    # here fails the whole chat request (utils/filter.py:190), so every missing piece means "do nothing".
    async def inlet(
        self,
        body: dict,
        __user__: dict | None = None,
        __metadata__: dict | None = None,
        __event_emitter__: EventEmitter | None = None,
        __model__: dict | None = None,
    ) -> dict:
        metadata = __metadata__ or {}
        if not self._acts_on(__model__, body):
            return body
        # The server sets these (main.py:1180-1212 the chat, main.py:1716-1719 the assistant message of this
        # model's run), and the emitter is bound to exactly that message (middleware.py:2398
        # get_event_emitter(metadata)). The client's body is not trusted for them.
        chat_id = metadata.get("chat_id")
        message_id = metadata.get("message_id")
        user = __user__ or {}
        user_id = user.get("id")
        if not self._is_reply(metadata, user_id) or not __event_emitter__:
            # Background tasks (title, tags, follow-ups...) carry `task`; temporary chats and API calls with
            # no chat are no reply of a saved chat. Their runs get a session of their own that no reply start
            # vouches for: whatever `user` the caller sent never names a chat at the Gateway.
            body["user"] = unvouched_session_user()
            return body
        # The Gateway's session of this reply (docs/gateway/openai-http-api.md, "Session behavior"): it names the
        # chat and the reply, so the reply's asks are shown in its widget. A filter's `user` reaches a plain
        # OpenAI connection unchanged (routers/openai.py:1206-1261).
        server_reply_id = reply_id(message_id)
        body["user"] = reply_session_user(chat_id, server_reply_id)
        if len(self.valves.auth_secret) < _MIN_AUTH_SECRET_LENGTH:
            # Without the shared secret no token can be minted; say so on the reply instead of failing the chat.
            await __event_emitter__(
                {
                    "type": "status",
                    "data": {
                        "description": "OpenClaw Asks: set the auth_secret valve",
                        "done": True,
                    },
                }
            )
            return body
        started = time.time()
        owner = await self._owner_of(chat_id)
        # In someone else's chat, shared with this user ("Allow replies", 0.12), Open WebUI draws embeds
        # only in the owner's view (Messages/ResponseMessage.svelte:755 in 0.12.4): a widget there would
        # show the owner a token minted for this user, and show this user nothing. The reply start still
        # says whose reply it is, so the server applies this user's rules to its asks.
        shows_widget = owner is None or owner == user_id
        token = mint_embed_token(
            self.valves.auth_secret,
            user_id,
            chat_id,
            self.valves.token_ttl_seconds,
            now=started,
            message_id=server_reply_id,
        )
        # `replace`: the message's embeds become exactly this widget, in the database and in open tabs
        # (socket/main.py:1036-1050); Continue re-runs the same message and must not stack a second one.
        event = {
            "type": "embeds",
            "data": {"embeds": [widget_url(self.valves.asks_url, chat_id, token)], "replace": True},
        }
        if shows_widget:
            await __event_emitter__(event)
            await __event_emitter__(theme_relay_event(self.valves.asks_url))
        self._forget(message_id)
        # A new reply is sent from a tab that knows the chat: an earlier reply's end needs no catching up.
        catch_up = self._catch_ups.pop(chat_id, None)
        if catch_up is not None:
            catch_up.cancel()
        title = await self._title_of(chat_id)
        reply = _Reply(event, chat_id, title, started=started)
        if shows_widget and self.tab_may_miss_new_chat_events and _is_first_reply(body):
            reply.send_again = asyncio.create_task(self._send_again(__event_emitter__, reply))
        self._replies[message_id] = reply
        while len(self._replies) > _REPLIES_KEPT:
            self._forget(next(iter(self._replies)))
        start = {
            "chatId": chat_id,
            "replyId": server_reply_id,
            "userId": user_id,
            "startedAt": int(started * 1000),
        }
        if owner is not None:
            start["chatOwnerId"] = owner
        name = user.get("name")
        if isinstance(name, str) and name.strip():
            # Every card of the reply's run says whose run asked (server 0.5 on; earlier ones ignore it).
            start["userName"] = name[:_MAX_NAME_LENGTH]
        answer = await self._tell(
            "/openwebui/replies",
            start | ({"title": title} if title else {}),
            "the start of a reply",
        )
        act = (answer or {}).get("act")
        if shows_widget and isinstance(act, str) and act:
            reply.act_event = act_relay_event(self.valves.asks_url, server_reply_id, act)
            await __event_emitter__(reply.act_event)
        return body

    @staticmethod
    def _is_reply(metadata: dict, user_id: object) -> bool:
        """Is this request a reply of a saved chat, whose start the server can be told (and whose ids fit its session key)?"""
        chat_id = metadata.get("chat_id")
        message_id = metadata.get("message_id")
        return (
            not metadata.get("task")
            and isinstance(chat_id, str)
            and isinstance(message_id, str)
            and isinstance(user_id, str)
            and bool(chat_id and message_id and user_id)
            and not chat_id.startswith(_UNSAVED_CHAT_PREFIXES)
            and ":" not in chat_id
            and len(chat_id) <= _MAX_ID_LENGTH
            and len(reply_id(message_id)) <= _MAX_ID_LENGTH
            and len(user_id) <= _MAX_ID_LENGTH
        )

    async def _owner_of(self, chat_id: str) -> str | None:
        try:
            owner = await self.chat_owner(chat_id)
        except Exception as error:  # noqa: BLE001 - without it the server records the reply's user, as before
            log.warning("OpenClaw Asks could not read a chat's user: %s", type(error).__name__)
            return None
        return owner if owner is not None and len(owner) <= _MAX_ID_LENGTH else None

    async def _title_of(self, chat_id: str) -> str | None:
        try:
            return await self.chat_title(chat_id)
        except Exception as error:  # noqa: BLE001 - a chat without a known title is named by its id
            log.warning("OpenClaw Asks could not read a chat's title: %s", type(error).__name__)
            return None

    async def _tell(self, route: str, payload: dict, what: str) -> dict | None:
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(
                    post_signed,
                    self.valves.server_url or self.valves.asks_url,
                    route,
                    self.valves.auth_secret,
                    payload,
                    _REPLY_START_TIMEOUT_SECONDS,
                ),
                _REPLY_START_TIMEOUT_SECONDS + 1,
            )
        except Exception as error:  # noqa: BLE001 - the chat goes on; the widget records the chat's user when it opens
            log.warning("OpenClaw Asks did not take %s (%s): %s", what, type(error).__name__, error)
            return None

    # A chat that had no title when its reply started gets one after that reply, from Open WebUI's title
    # task (or its first message): looked for on a schedule, then told once.
    async def _watch_title(self, chat_id: str) -> None:
        async for _ in _after_each(self.title_looks_after):
            title = await self._title_of(chat_id)
            if title:
                await self._tell(
                    "/openwebui/titles", {"chatId": chat_id, "title": title}, "a chat's title"
                )
                return

    # Before 0.12.4, in a brand-new chat the tab learns the chat id only from the HTTP answer to its request
    # (src/lib/components/chat/Chat.svelte:3235-3236) and drops events for any other chat id (line 952),
    # while the inlet runs in a task started before that answer (main.py:1751-1756): the inlet's embed is
    # stored, but the open tab can miss it. The same event is sent again on a schedule, whether or not the
    # reply streams text (an agent that asks first streams none while it waits). It carries the same URL,
    # so a tab that already shows the widget keeps its iframe, but scrolls it into view each time
    # (Chat.svelte:1007-1017): never for a chat the tab already knows.
    async def _send_again(self, emit: EventEmitter, reply: _Reply) -> None:
        async for _ in _after_each(self.send_again_after):
            try:
                for event in reply.events():
                    await emit(event)
            except Exception as error:  # noqa: BLE001 - a later send, or the outlet's, may still reach the tab
                log.warning("OpenClaw Asks could not send the widget again: %s", error)

    # Right before each model call (Open WebUI 0.11.2+, utils/middleware.py:3010-3020 in 0.12.4, after its
    # built-in tools were added at :2927-2933). Since 0.11.1 those include an `ask_user` of Open WebUI's own
    # (tools/builtin.py:525-634); the Gateway refuses a caller's tool named like one of its own ("client
    # tool name conflict"), so every reply on OpenClaw would fail, and the agent's questions belong to its
    # own `ask_user`, which OpenClaw Asks shows. Such tools are dropped here.
    #
    # It also has the last word on the session (it runs after everything that edits the body): a reply the
    # inlet announced keeps its session; any other request gets one no reply start vouches for.
    async def request(
        self,
        body: dict,
        __model__: dict | None = None,
        __metadata__: dict | None = None,
        __user__: dict | None = None,
    ) -> dict:
        if not self._acts_on(__model__, body):
            return body
        metadata = __metadata__ or {}
        if self._is_reply(metadata, (__user__ or {}).get("id")):
            body["user"] = reply_session_user(metadata["chat_id"], reply_id(metadata["message_id"]))
        elif not str(body.get("user") or "").startswith(UNVOUCHED_PREFIX):
            body["user"] = unvouched_session_user()
        tools = body.get("tools")
        if not isinstance(tools, list):
            return body
        kept = [tool for tool in tools if _tool_name(tool) not in GATEWAY_OWN_TOOL_NAMES]
        if len(kept) != len(tools):
            body["tools"] = kept
            if not kept:
                del body["tools"]
                body.pop("tool_choice", None)
        return body

    # Each chunk of the reply as it streams (utils/middleware.py:4260-4267): the text of a prompt is held
    # back from its trigger line on, and at the reply's end the question is released without its trigger.
    # A reply that calls Open WebUI's own tools streams on in another request: it ends at the last finish.
    async def stream(self, event: dict, __metadata__: dict | None = None) -> dict:
        reply = self._replies.get((__metadata__ or {}).get("message_id") or "")
        choices = event.get("choices") if isinstance(event, dict) else None
        if (
            reply is None
            or reply.scanner.ended
            or not isinstance(choices, list)
            or not choices
            or not isinstance(choices[0], dict)
        ):
            return event
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        content = delta.get("content")
        shown = reply.scanner.push(content) if isinstance(content, str) and content else ""
        finish = choice.get("finish_reason")
        if finish and finish != "tool_calls":
            shown += _finish(reply.scanner)
        if shown or isinstance(content, str):
            delta["content"] = shown
            choice["delta"] = delta
        return event

    # Once the reply is finished (utils/middleware.py:3505-3521): the widget once more, for a new chat's tab
    # that was slower still; a reply that did not stream is cleaned of its trigger here, in `content` and in the
    # `output` items the page draws (utils/middleware.py:3528-3553); then the reply is forgotten.
    async def outlet(
        self,
        body: dict,
        __metadata__: dict | None = None,
        __event_emitter__: EventEmitter | None = None,
    ) -> dict:
        metadata = __metadata__ or {}
        message_id = metadata.get("message_id") or ""
        reply = self._forget(message_id)
        if reply is None:
            return body
        if __event_emitter__ and reply.send_again is not None:
            for event in reply.events():
                await __event_emitter__(event)
            await __event_emitter__(theme_relay_event(self.valves.asks_url))
        if reply.title is None:
            watch = asyncio.create_task(self._watch_title(reply.chat_id))
            self._title_watches.add(watch)
            watch.add_done_callback(self._title_watches.discard)
        message = next(
            (
                message
                for message in body.get("messages") or []
                if isinstance(message, dict)
                and message.get("id") == message_id
                and message.get("role") == "assistant"
            ),
            None,
        )
        if message is not None and not reply.scanner.ended:
            if reply.scanner.started:
                # It streamed but no chunk said it finished: what the scanner still holds is its end.
                _append_to_message(message, _finish(reply.scanner))
            else:
                _clean_message(message)
        if reply.send_again is not None and time.time() - reply.started < CATCH_UP_WITHIN_SECONDS:
            content = (message or {}).get("content")
            self._catch_ups[reply.chat_id] = asyncio.create_task(
                self._catch_up(metadata, reply, content if isinstance(content, str) else None)
            )
        return body

    # Before 0.12.4 (see `_send_again`), a brand-new chat's first reply can end before its tab knows the
    # chat: the tab then misses the reply's end too (`chat:completion` with `done`, utils/middleware.py:
    # 5538-5543 in 0.11.0, sent before the outlet), shows the reply as still being written without its
    # widget, and queues what the person sends next behind it (chat/Chat.svelte:2730-2744). So for such a
    # reply the widget and its end are sent again after the outlet, through an emitter that stores nothing
    # (`open_webui_quiet_emitter`), until a next reply of the chat starts. A tab that had them takes them
    # again unchanged (Chat.svelte:2377-2470: the same content, done once more), but for a person's
    # settings that act at each end (responseAutoCopy, responseAutoPlayback: :2442-2449).
    async def _catch_up(self, metadata: dict, reply: _Reply, content: str | None) -> None:
        end = {"type": "chat:completion", "data": {"done": True}}
        if content:
            end["data"]["content"] = content
        try:
            emit = await self.quiet_emitter(metadata)
            if emit is None:
                return
            async for _ in _after_each(self.catch_up_after):
                try:
                    for event in [*reply.events(), end]:
                        await emit(event)
                except Exception as error:  # noqa: BLE001 - a later send may still reach the tab
                    log.warning("OpenClaw Asks could not send a reply's end again: %s", error)
        finally:
            if self._catch_ups.get(reply.chat_id) is asyncio.current_task():
                del self._catch_ups[reply.chat_id]

    def _forget(self, message_id: str) -> _Reply | None:
        reply = self._replies.pop(message_id, None)
        if reply is not None and reply.send_again is not None:
            reply.send_again.cancel()
        return reply


def _is_first_reply(body: dict) -> bool:
    """Whether the request is a chat's first reply: no assistant message before it (a new chat's, in the tab)."""
    return not any(
        isinstance(message, dict) and message.get("role") == "assistant"
        for message in body.get("messages") or []
    )


def _tool_name(tool: object) -> str | None:
    """The name of an OpenAI tool entry (`{"type": "function", "function": {"name": ...}}`)."""
    function = tool.get("function") if isinstance(tool, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None


def _message_texts(message: dict) -> list[dict]:
    """The `output_text` parts of a stored assistant message's `output` message items, in order."""
    return [
        part
        for item in message.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    ]


def _append_to_message(message: dict, text: str) -> None:
    if not text:
        return
    if isinstance(message.get("content"), str):
        message["content"] += text
    parts = _message_texts(message)
    if parts:
        parts[-1]["text"] += text


def _clean_message(message: dict) -> None:
    """A stored assistant message without its text prompt's trigger, in `content` and in its `output` items."""
    if isinstance(message.get("content"), str):
        message["content"] = visible_reply(message["content"])
    for part in _message_texts(message):
        part["text"] = visible_reply(part["text"])
