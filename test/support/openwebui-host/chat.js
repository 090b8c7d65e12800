// The behaviour of Open WebUI's chat page around embeds, for tests. Every rule cites its source:
// "EMBEDS.md" is /work/shared/open-webui/EMBEDS.md; Svelte paths are in open-webui 0.11.0
// (src/lib/components/...), read from the source maps its PyPI wheel ships.
(function () {
  "use strict";

  const chatId = decodeURIComponent(location.pathname.replace(/^\/c\//, ""));
  const container = document.getElementById("messages-container");
  const list = document.createElement("ul");
  list.setAttribute("role", "log");

  // chat/Messages.svelte:58: a chat opens with the last 8 messages (user and assistant alike) of the
  // branch mounted; chat/Messages.svelte:67-80 adds 8 more each time the loader at the top is visible.
  const PAGE = 8;
  let messagesCount = PAGE;
  let loading = false;
  /** The branch shown, oldest first: {id, role, content, embeds?}. */
  let history = [];
  /** Mounted message elements by id; each keeps its embed frames in `frames`. */
  const mounted = new Map();

  // common/FullHeightIframe.svelte (EMBEDS.md "The iframe").
  const URL_PATTERN = /^(https?:)?\/\//i;

  function createFrame(src) {
    const iframe = document.createElement("iframe");
    iframe.title = "Embedded Content";
    iframe.className = "w-full rounded-2xl";
    iframe.setAttribute("width", "100%");
    iframe.setAttribute("frameborder", "0");
    // allowSameOrigin is a user setting, off by default (chat/Messages/ResponseMessage.svelte:722):
    // the embed runs in an opaque origin.
    iframe.setAttribute("sandbox", "allow-scripts allow-forms allow-popups allow-downloads");
    iframe.setAttribute("allowfullscreen", "");
    // No initial height (initialHeight = null): the browser default, 150 px, until the page reports one.
    setFrameSource(iframe, src);
    const onMessage = (event) => {
      // Only this iframe's own window counts; the origin is not checked.
      if (event.source !== iframe.contentWindow) return;
      const data = event.data || {};
      if (data.type === "iframe:height" && typeof data.height === "number") {
        iframe.style.height = Math.max(0, data.height) + "px";
      }
      if (data.type === "pong") iframe.contentWindow.postMessage({ type: "pong:ack" }, "*");
      if (data.type === "payload")
        iframe.contentWindow.postMessage(
          { type: "payload", requestId: data.requestId ?? null, payload: null },
          "*",
        );
    };
    window.addEventListener("message", onMessage);
    return { iframe, src, destroy: () => window.removeEventListener("message", onMessage) };
  }

  // A URL becomes `src` (with the referrer policy); anything else becomes `srcdoc` (without one).
  function setFrameSource(iframe, src) {
    if (URL_PATTERN.test(src)) {
      iframe.removeAttribute("srcdoc");
      iframe.setAttribute("referrerpolicy", "strict-origin-when-cross-origin");
      iframe.setAttribute("src", src);
    } else {
      iframe.removeAttribute("src");
      iframe.removeAttribute("referrerpolicy");
      iframe.setAttribute("srcdoc", src);
    }
  }

  function createMessageElement(message) {
    const item = document.createElement("li");
    item.setAttribute("role", "listitem");
    item.className = `message-listitem ${message.role}`;
    item.dataset.messageId = message.id;
    const content = document.createElement("div");
    content.className = message.role === "assistant" ? "response-content" : "user-content";
    content.textContent = message.content;
    item.append(content);
    const element = { item, content, embedsContainer: null, frames: [] };
    mounted.set(message.id, element);
    if (message.role === "assistant") renderEmbeds(element, message.embeds || []);
    return element;
  }

  // chat/Messages/ResponseMessage.svelte:711-728: `{#each message.embeds as embed, idx}` inside
  // `<div id="{id}-embeds-container">`, placed ABOVE the reply's text (ContentRenderer, line 820).
  // The each block is keyed by index: a changed list reuses the iframe at each index and only
  // changes its source (the element, and the height it was given, stay); an empty list removes
  // the container and every iframe in it.
  function renderEmbeds(element, embeds) {
    const messageId = element.item.dataset.messageId;
    if (embeds.length === 0) {
      element.frames.forEach((frame) => frame.destroy());
      element.frames = [];
      element.embedsContainer?.remove();
      element.embedsContainer = null;
      return;
    }
    if (!element.embedsContainer) {
      element.embedsContainer = document.createElement("div");
      element.embedsContainer.id = `${messageId}-embeds-container`;
      element.embedsContainer.className = "embeds-container";
      element.item.insertBefore(element.embedsContainer, element.content);
    }
    embeds.forEach((src, index) => {
      const frame = element.frames[index];
      if (frame) {
        if (frame.src !== src) {
          setFrameSource(frame.iframe, src);
          frame.src = src;
        }
        return;
      }
      const created = createFrame(src);
      const wrapper = document.createElement("div");
      wrapper.className = "embed";
      wrapper.id = `${messageId}-embeds-${index}`;
      wrapper.append(created.iframe);
      element.embedsContainer.append(wrapper);
      element.frames.push(created);
    });
    element.frames.splice(embeds.length).forEach((frame) => {
      frame.destroy();
      frame.iframe.parentElement.remove();
    });
  }

  function unmount(id) {
    const element = mounted.get(id);
    element.frames.forEach((frame) => frame.destroy());
    element.item.remove();
    mounted.delete(id);
  }

  // chat/Messages.svelte:87-105 buildMessages: the last `messagesCount` messages of the branch; a
  // keyed each (line 535), so mounted messages keep their iframes, and a message that falls out of
  // the window (a new reply pushes the oldest out) is torn down. Existing elements are never moved:
  // moving an iframe in the DOM would reload it.
  function buildMessages() {
    const shown = history.slice(Math.max(0, history.length - messagesCount));
    const wanted = new Set(shown.map((message) => message.id));
    [...mounted.keys()].filter((id) => !wanted.has(id)).forEach(unmount);
    let previous = null;
    for (const message of shown) {
      const existing = mounted.get(message.id);
      if (existing) {
        previous = existing.item;
        continue;
      }
      const element = createMessageElement(message);
      list.insertBefore(element.item, previous ? previous.nextSibling : list.firstChild);
      previous = element.item;
    }
    updateLoader(shown.length < history.length);
  }

  // common/Loader.svelte: an IntersectionObserver (threshold 0.1) on a "Loading..." row above the
  // messages that fires every 100 ms while visible; Messages.svelte:520-527 loads more on it.
  let loader = null;
  function updateLoader(hasOlder) {
    if (hasOlder && !loader) {
      const element = document.createElement("div");
      element.className = "loader";
      element.textContent = "Loading...";
      let interval = null;
      const observer = new IntersectionObserver(
        (entries) => {
          for (const entry of entries) {
            clearInterval(interval);
            if (entry.isIntersecting)
              interval = setInterval(() => loading || loadMoreMessages(), 100);
          }
        },
        { root: null, rootMargin: "0px", threshold: 0.1 },
      );
      loader = {
        element,
        destroy: () => (observer.disconnect(), clearInterval(interval), element.remove()),
      };
      container.insertBefore(element, list);
      observer.observe(element);
    } else if (!hasOlder && loader) {
      loader.destroy();
      loader = null;
    }
  }

  // chat/Messages.svelte:67-80: scroll 100 px down first so loading does not run away, then 8 more.
  function loadMoreMessages() {
    container.scrollTop = container.scrollTop + 100;
    loading = true;
    messagesCount += PAGE;
    buildMessages();
    loading = false;
  }

  function scrollToBottom() {
    container.scrollTop = container.scrollHeight;
    requestAnimationFrame(() => (container.scrollTop = container.scrollHeight));
  }

  // chat/Chat.svelte:949-1018: events for another chat, or for a message this tab does not have, are
  // ignored; `embeds` sets the message's list to exactly what the event carries (the tab does not
  // merge, whatever `replace` says), then scrolls the embeds container into view after 100 ms.
  function onChatEvent(event) {
    if (event.chat_id !== chatId) return;
    const message = history.find((candidate) => candidate.id === event.message_id);
    if (!message) return;
    const type = event.data?.type;
    const data = event.data?.data ?? null;
    if (type === "embeds" || type === "chat:message:embeds") {
      message.embeds = data.embeds;
      const element = mounted.get(message.id);
      if (element) renderEmbeds(element, message.embeds);
      setTimeout(
        () =>
          document
            .getElementById(`${event.message_id}-embeds-container`)
            ?.scrollIntoView({ behavior: "smooth", block: "center" }),
        100,
      );
    } else if (type === "message") {
      message.content += data.content;
      const element = mounted.get(message.id);
      if (element) element.content.textContent = message.content;
    }
  }

  /**
   * The user writes in this tab: the tab adds the user message and the assistant placeholder to
   * its own history (other tabs of the chat see them only after a reload) and the server stores them.
   */
  async function appendReply(userMessage, assistantMessage) {
    const response = await fetch(`/api/chats/${encodeURIComponent(chatId)}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([userMessage, assistantMessage]),
    });
    if (!response.ok) throw new Error(`append failed: ${response.status}`);
    history.push({ ...userMessage, role: "user" }, { ...assistantMessage, role: "assistant" });
    buildMessages();
    scrollToBottom();
  }

  async function start() {
    const response = await fetch(`/api/chats/${encodeURIComponent(chatId)}`);
    history = (await response.json()).messages;
    container.append(list);
    buildMessages();
    scrollToBottom();
    // Open WebUI's socket delivers events to every tab of the user (room user:{id}); here an
    // EventSource stands in for it. `data-ready` tells tests the tab listens.
    const events = new EventSource("/api/events");
    events.addEventListener("message", (message) => onChatEvent(JSON.parse(message.data)));
    events.addEventListener("open", () => (document.body.dataset.ready = "true"));
  }

  window.openWebuiHost = {
    appendReply,
    mountedMessageIds: () => [...list.children].map((item) => item.dataset.messageId),
  };
  start();
})();
