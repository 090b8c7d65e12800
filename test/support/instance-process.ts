// One product server in a process of its own (no UI), configured from the environment as `npm start`
// is, for the tests that kill an instance with SIGKILL (test/redis/). It prints one JSON line with its
// URL once it listens, and runs until killed.
import { systemClock } from "../../lib/clock.ts";
import { parseConfig } from "../../server/config.ts";
import { startApplication } from "./tabs.ts";

const config = parseConfig(process.env);
if (!config.AUTH_SECRET) {
  console.error("instance-process.ts needs AUTH_SECRET");
  process.exit(2);
}
const app = await startApplication(
  config,
  config.AUTH_SECRET,
  (line) => console.error(`[instance] ${line}`),
  { clock: systemClock() },
);
process.stdout.write(`${JSON.stringify({ url: app.url })}\n`);
process.once("SIGTERM", () => {
  app.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
