// A minimal ACP v2 agent on the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0, "experimental/v2") that streams one message of COUNT chunks (argv[2],
// default 1000) the way the SDK writes them: one line per notification, each text
// distinct and ending in "\n" (a model streaming lines). bench/compare.py measures
// clients against it; tests/interop checks that acp_lite receives every chunk.
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const COUNT = Number(process.argv[2] ?? 1000);
const WORDS = ["the", "model", "reads", "a", "file", "and", "writes", "its", "answer", "token"];

/** The text of chunk i: distinct, 20-40 characters, ending in a newline. */
export function chunkText(i) {
  const n = 20 + ((i * 7919) % 21);
  let out = String(i);
  let k = i;
  while (out.length < n - 1) {
    k = (k * 1103515245 + 12345) & 0x7fffffff;
    out += " " + WORDS[k % WORDS.length];
  }
  return out.slice(0, n - 1) + "\n";
}

const app = acp
  .agent({ name: "acp-lite-ts-flood-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "ts-flood-agent", version: "2.4.0" },
    capabilities: { session: {} },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "ts-flood-1" }))
  .onRequest(acp.methods.agent.session.prompt, ({ params, client }) => {
    const sessionId = params.sessionId;
    const send = (update) =>
      client.notify(acp.methods.client.session.update, { sessionId, update });
    const done = (async () => {
      await send({ sessionUpdate: "state_update", state: "running", background: [] });
      await send({ sessionUpdate: "user_message", messageId: "user-1", content: params.prompt });
      for (let i = 0; i < COUNT; i++) {
        await send({
          sessionUpdate: "agent_message_chunk",
          messageId: "agent-1",
          content: { type: "text", text: chunkText(i) },
        });
      }
      await send({
        sessionUpdate: "state_update",
        state: "idle",
        background: [],
        stopReason: "end_turn",
      });
    })();
    void done;
    return { messageId: "user-1" };
  });

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
connection.closed.then(
  () => process.exit(0),
  () => process.exit(0),
);
