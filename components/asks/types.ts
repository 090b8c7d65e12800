import type { AnswerAck, TabAnswer } from "../../lib/protocol.ts";
import type { ClientFailure } from "../../client/socket.ts";

/** What a card gets back from sending an answer: the server's ack, or a failure the browser saw. */
export type AnswerResult = AnswerAck | ClientFailure;

/** Sends one answer for the card's ask. Cards never talk to the socket themselves. */
export type SubmitAnswer = (answer: TabAnswer) => Promise<AnswerResult>;
