import { type RefObject, useEffect, useRef } from "react";

/**
 * Reports the widget's height to the host page on every size change, the way Open WebUI's
 * FullHeightIframe listens for it: `postMessage({type: "iframe:height", height}, "*")`.
 * The target is "*" because the host's origin is not known inside the sandbox; the message carries
 * nothing but a number.
 */
export function useFrameHeight(ref: RefObject<HTMLElement | null>): void {
  const report = useRef<() => void>(() => {});

  useEffect(() => {
    const element = ref.current;
    if (!element || window.parent === window) return;
    let last = -1;
    report.current = () => {
      const style = getComputedStyle(document.body);
      const height = Math.ceil(
        element.getBoundingClientRect().height +
          parseFloat(style.marginTop) +
          parseFloat(style.marginBottom),
      );
      if (height === last) return;
      last = height;
      window.parent.postMessage({ type: "iframe:height", height }, "*");
    };
    const observer = new ResizeObserver(() => report.current());
    observer.observe(element);
    report.current();
    return () => {
      observer.disconnect();
      report.current = () => {};
    };
  }, [ref]);

  // Open WebUI skips rendering replies scrolled out of view (content-visibility: auto), and a frame
  // there gets no ResizeObserver callback until it is back in view: measuring after every render keeps
  // the host's height true meanwhile (a superseded widget collapses at once, wherever it is).
  useEffect(() => report.current());
}
