import type { Ask, AskStatus } from "../../lib/ask.ts";
import type { Clock } from "../../lib/clock.ts";
import { type Admission, admit, canSee, originOf, usesOwnersPower } from "../../lib/policy.ts";
import { type Ack, fail } from "../../lib/protocol.ts";
import { isOpenAiEndpointRun } from "../../lib/session-key.ts";
import { type AskStore, REPLY_START_KEEP_MS } from "../store/store.ts";
import type { Tab } from "./ports.ts";

/**
 * Who a chat belongs to, and so who may view it and see its asks (docs/SECURITY.md#chat-ownership): the recorded owner of a
 * chat is its first proven user and never changes, so a known one is remembered; owners see everything.
 */

/** Retention keeps chats viewed within HISTORY_DAYS (at least a day): one write an hour per chat is plenty. */
const VIEW_NOTE_INTERVAL_MS = 3_600_000;

export type ViewAdmission =
  { ok: true; owner: string; ownerIsNew: boolean } | { ok: false; refusal: Ack };
/** Which stored asks `asks:list` may return to a tab beyond the pending ones, or none. */
export type HistoryScope = { chatId?: string; ownedBy?: string } | null;

export type ChatAccessOptions = {
  store: AskStore;
  clock: Clock;
  owners: ReadonlySet<string>;
  /** ALLOW_UNVOUCHED_RUNS (lib/policy.ts `admit`). */
  allowUnvouched?: boolean;
  /** Where background work's failures go (the broker's one boundary). */
  settle: (work: Promise<unknown>, what: string) => void;
};

export class ChatAccess {
  readonly owners: ReadonlySet<string>;
  private readonly allowUnvouched: boolean;
  private readonly store: AskStore;
  private readonly clock: Clock;
  private readonly settle: ChatAccessOptions["settle"];
  private readonly knownOwners = new Map<string, string>();
  /** When this instance last wrote a chat's view time to the store. */
  private readonly viewNoted = new Map<string, number>();

  constructor(options: ChatAccessOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.owners = options.owners;
    this.allowUnvouched = options.allowUnvouched ?? false;
    this.settle = options.settle;
  }

  async owner(chatId: string): Promise<string | null> {
    const known = this.knownOwners.get(chatId);
    if (known !== undefined) return known;
    const owner = await this.store.chatOwner(chatId);
    if (owner !== null) this.knownOwners.set(chatId, owner);
    return owner;
  }

  /**
   * A new ask, with whose run it is (`origin`: a `/v1` run is its reply's, as the filter's signed reply
   * start named it, or nobody's), and whether it is asked: both reads at once, on the card's way.
   */
  async admission(ask: Ask): Promise<{ ask: Ask; verdict: Admission; chatOwner: string | null }> {
    const { chatId, replyId } = ask;
    const vouchable =
      ask.origin === undefined &&
      chatId !== null &&
      replyId !== undefined &&
      isOpenAiEndpointRun(ask.sessionKey, ask.runId);
    const [chatOwner, starter] = await Promise.all([
      chatId ? this.owner(chatId) : null,
      vouchable
        ? this.store.replyStarter(chatId, replyId, this.clock.now() - REPLY_START_KEEP_MS)
        : null,
    ]);
    const judged = ask.origin ? ask : { ...ask, origin: originOf(ask, starter) };
    return { ask: judged, verdict: this.judge(judged, chatOwner), chatOwner };
  }

  /** The one verdict (lib/policy.ts `admit`) with this server's owners and settings. */
  judge(ask: Ask, chatOwner: string | null): Admission {
    return admit(ask, { chatOwner, owners: this.owners, allowUnvouched: this.allowUnvouched });
  }

  /** Records `userId` as the chat's owner unless one is: the owner, and whether it is new. */
  async claim(chatId: string, userId: string): Promise<{ owner: string; isNew: boolean }> {
    const known = await this.owner(chatId);
    if (known !== null) return { owner: known, isNew: false };
    return { owner: await this.record(chatId, userId), isNew: true };
  }

  /**
   * Whether this tab may view the chat. A chat's owner is recorded only from a token that proves it:
   * the widget's token for this very chat (the Open WebUI filter mints it for the chat's user), or an
   * owner's. Any other token could claim chats nobody has opened yet and lock their users out.
   */
  async admitView(tab: Tab, chatId: string): Promise<ViewAdmission> {
    const known = await this.owner(chatId);
    if (known === null && tab.chatClaim === null && !tab.isOwner) {
      return {
        ok: false,
        refusal: fail(
          "FORBIDDEN",
          "this chat has no recorded user yet: open it from its Open WebUI widget first",
        ),
      };
    }
    const owner = known ?? (await this.record(chatId, tab.userId));
    if (!tab.isOwner && owner !== tab.userId)
      return { ok: false, refusal: fail("FORBIDDEN", "this chat belongs to another user") };
    this.noteView(chatId, owner);
    return { ok: true, owner, ownerIsNew: known === null };
  }

  /** For a chat whose owner is recorded: `chatViewed` writes that owner back if retention removed the row. */
  noteView(chatId: string, owner: string): void {
    const now = this.clock.now();
    const last = this.viewNoted.get(chatId);
    if (last !== undefined && now - last < VIEW_NOTE_INTERVAL_MS) return;
    this.viewNoted.set(chatId, now);
    this.settle(this.store.chatViewed(chatId, owner, now), `noting a view of chat ${chatId}`);
  }

  /** May this tab see (and answer) the ask? Its user must, and an embed token's chat claim must match. */
  async visibleTo(
    tab: Pick<Tab, "userId" | "isOwner" | "chatClaim">,
    ask: Pick<Ask, "chatId">,
  ): Promise<boolean> {
    if (tab.chatClaim !== null && ask.chatId !== tab.chatClaim) return false;
    return canSee(ask, tab.userId, tab.isOwner, ask.chatId ? await this.owner(ask.chatId) : null);
  }

  /**
   * May this tab use the owner's power (approve a tool call, enter a secret) on an ask it sees
   * (docs/SECURITY.md#a-stored-token-never-acts)? A token bound to a chat is stored on its reply's
   * message, so whoever reads the chat or a share of it holds it: it does so only with the act token of
   * its own reply and user, which the filter handed to the browser that sent the reply's message. Any
   * other token (an owner or device link, an Open WebUI session) is kept by its browser, never in a chat.
   */
  async mayAct(
    tab: Pick<Tab, "userId" | "chatClaim" | "reply" | "act">,
    ask: Ask,
  ): Promise<boolean> {
    if (tab.chatClaim === null || !usesOwnersPower(ask)) return true;
    const act = await tab.act?.();
    return (
      act !== undefined &&
      act.chat === tab.chatClaim &&
      act.userId === tab.userId &&
      act.msg === tab.reply?.msg
    );
  }

  /** Those of `asks` this tab may see, in their order. */
  async visibleOf<T extends Pick<Ask, "chatId">>(
    tab: Pick<Tab, "userId" | "isOwner" | "chatClaim">,
    asks: readonly T[],
  ): Promise<T[]> {
    const visible = await Promise.all(asks.map((ask) => this.visibleTo(tab, ask)));
    return asks.filter((_, index) => visible[index]);
  }

  /**
   * The asks this tab may see: the pending ones `tracked` (however old), any other status from the
   * store (its newest, each as tracked if it is); `all` is both.
   */
  async list(tab: Tab, status: AskStatus | "all", tracked: readonly Ask[]): Promise<Ask[]> {
    if (status === "pending") return this.visibleOf(tab, tracked);
    const scope = await this.historyScope(tab);
    if (scope === null) return [];
    const live = new Map(tracked.map((ask) => [ask.id, ask]));
    const stored = (
      await this.store.list({ status: status === "all" ? undefined : status, ...scope })
    ).map((ask) => live.get(ask.id) ?? ask);
    if (status !== "all") return stored;
    const listed = new Set(stored.map((ask) => ask.id));
    return [
      ...(await this.visibleOf(
        tab,
        tracked.filter((ask) => !listed.has(ask.id)),
      )),
      ...stored,
    ];
  }

  /** Records the chat's owner unless the store has one: the owner in force, known from now on. */
  private async record(chatId: string, userId: string): Promise<string> {
    const owner = await this.store.recordChatOwner(chatId, userId);
    this.knownOwners.set(chatId, owner);
    return owner;
  }

  /** An embed token sees its chat's history only when its user owns that chat (owners own all). */
  private async historyScope(tab: Tab): Promise<HistoryScope> {
    if (tab.chatClaim === null) return tab.isOwner ? {} : { ownedBy: tab.userId };
    if (!tab.isOwner && (await this.owner(tab.chatClaim)) !== tab.userId) return null;
    return { chatId: tab.chatClaim };
  }
}
