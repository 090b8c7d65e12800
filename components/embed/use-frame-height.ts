import { useEffect, type RefObject } from "react";

/**
 * Reports the widget's height to the host page on every size change, the way Open WebUI's
 * FullHeightIframe listens for it: `postMessage({type: "iframe:height", height}, "*")`.
 * The target is "*" because the host's origin is not known inside the sandbox; the message carries
 * nothing but a number.
 */
export function useFrameHeight(ref: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const element = ref.current;
    if (!element || window.parent === window) return;
    let last = -1;
    const report = () => {
      const style = getComputedStyle(document.body);
      const height = Math.ceil(element.getBoundingClientRect().height + parseFloat(style.marginTop) + parseFloat(style.marginBottom));
      if (height === last) return;
      last = height;
      window.parent.postMessage({ type: "iframe:height", height }, "*");
    };
    const observer = new ResizeObserver(report);
    observer.observe(element);
    report();
    return () => observer.disconnect();
  }, [ref]);
}
