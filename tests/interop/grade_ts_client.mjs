// A client written with the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0: `experimental/v2`, or with --v1 its default v1 API) that keeps
// `acp-lite grade-client`'s contract (docs/grading.md): start the agent in
// $ACP_AGENT_ARGV, one session in the current directory, one prompt "grade",
// print the agent's reply when the turn ends (the SDK's own text helper:
// v2 readTextUntilIdle, v1 readText), cancel the turn on SIGINT.
//
// What the SDK leaves to the application is written to the spec: permission
// requests of work we cancelled get `cancelled`; v1 fs requests read and write
// the files asked for, terminals run the command asked for. Everything else (framing, batches, unknown methods,
// notifications and variants, early updates, the reply text) is the SDK's.
//
// Usage: node grade_ts_client.mjs [--v1]
import { execFile, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const v1 = process.argv.includes("--v1");
const acp = await import(v1 ? "@agentclientprotocol/sdk" : "@agentclientprotocol/sdk/experimental/v2");
const argv = JSON.parse(process.env.ACP_AGENT_ARGV);
const agent = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });

let cancelled = false;
const terminals = new Map();
let app = acp
  .client({ name: "grade-ts-client" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    if (cancelled) return { outcome: { outcome: "cancelled" } };
    const option = params.options.find((o) => o.kind.startsWith("allow_")) ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });
if (v1) {
  app = app
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => ({
      content: readFileSync(params.path, "utf8"),
    }))
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      const terminalId = `term-${terminals.size + 1}`;
      terminals.set(
        terminalId,
        new Promise((resolve) => {
          execFile(params.command, params.args ?? [], (error, stdout) => {
            resolve({ output: stdout, exitCode: error ? (error.code ?? 1) : 0 });
          });
        }),
      );
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => ({
      exitCode: (await terminals.get(params.terminalId)).exitCode,
    }))
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => ({
      output: (await terminals.get(params.terminalId)).output,
      truncated: false,
    }))
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      terminals.delete(params.terminalId);
      return {};
    });
}
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

let reply = null;
let failure = null;
await app
  .connectWith(stream, async (ctx) => {
    if (v1) {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      });
    } else {
      await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "grade-ts-client", version: "2.4.0" },
        capabilities: {},
      });
    }
    const session = await ctx.buildSession(process.cwd()).start();
    process.on("SIGINT", () => {
      cancelled = true;
      ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
    });
    if (v1) {
      const text = session.readText();
      await session.prompt("grade");
      reply = await text;
    } else {
      const prompted = session.prompt("grade");
      reply = await session.readTextUntilIdle();
      await prompted;
    }
  })
  .catch((error) => {
    failure = error;
  });

agent.stdin.end();
if (failure !== null) {
  process.stderr.write(`grade-ts-client: ${failure?.stack ?? failure}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(`${reply}\n`);
}
setTimeout(() => agent.kill(), 1000).unref();
