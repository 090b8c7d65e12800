// Clicking a control of our widget inside Open WebUI's page, as a person does.
//
// Open WebUI scrolls its page while a chat loads and while a reply is written (to the newest message,
// and to an embed when it mounts: Chat.svelte:1656-1666 in 0.12.4). Playwright's checks that a control
// holds still look inside the widget's own frame only, not at the frame moving in the page, so a click
// can land where the control was a moment before. A person waits for the page to stop, clicks, and
// clicks again when the click did not take; so do these helpers, and they count the misses.
import type { Locator } from "playwright-core";

const STILL_FRAMES = 5;
const STILL_TIMEOUT_MS = 5_000;
const TOOK_WITHIN_MS = 2_000;
const ATTEMPTS = 3;

/** Resolves once the element's place in its page has not changed for a few animation frames in a row (or after 5 s). */
async function holdsStill(element: Locator): Promise<void> {
  await element.evaluate(
    (node, { frames, timeoutMs }) =>
      new Promise<void>((resolve) => {
        const deadline = performance.now() + timeoutMs;
        let last = "";
        let still = 0;
        const tick = () => {
          const box = node.getBoundingClientRect();
          const place = `${box.top},${box.left},${box.height}`;
          still = place === last ? still + 1 : 0;
          last = place;
          if (still >= frames || performance.now() > deadline) resolve();
          else requestAnimationFrame(tick);
        };
        tick();
      }),
    { frames: STILL_FRAMES, timeoutMs: STILL_TIMEOUT_MS },
  );
}

/**
 * Clicks `control` (inside the widget iframe `frame` of Open WebUI's page) once that frame holds still,
 * until `took` says the click had its effect: at most three clicks. Returns how many missed.
 */
export async function clickInWidget(
  frame: Locator,
  control: Locator,
  took: () => Promise<boolean>,
  what: string,
): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    await holdsStill(frame);
    await control.click();
    const deadline = Date.now() + TOOK_WITHIN_MS;
    while (Date.now() < deadline) {
      if (await took().catch(() => false)) return attempt - 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (attempt === ATTEMPTS) throw new Error(`${ATTEMPTS} clicks and still not ${what}`);
  }
}
