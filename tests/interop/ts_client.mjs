// A tiny ACP v2 client written with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, export "experimental/v2"). It launches an
// agent, runs one prompt end to end and checks what the agent did against the
// v2 prompt lifecycle. Used to check acp_lite's reference agent with someone
// else's implementation.
//
// Usage:
//   node ts_client.mjs [options] -- AGENT_COMMAND [ARGS...]
//   node ts_client.mjs [options] --agent-fds IN,OUT
//   node ts_client.mjs --cases FILE [--jobs N]
// Options:
//   --prompt TEXT          prompt text (default "hello")
//   --expect-stop REASON   stop reason of the idle that ends the turn (default end_turn)
//   --expect-text TEXT     agent text of the turn must contain TEXT
//   --permission MODE      answer session/request_permission: allow | reject | cancel
//                          (default allow); the summary counts the requests
//   --expect-permission    fail unless at least one permission request arrived
//   --cancel               send session/cancel once the prompt is inserted and
//                          foreground work is reported running
//   --request-after-cancel METHOD
//                          then send the extension request METHOD ({} params) and
//                          await its answer (result or error): answered, it shows
//                          that the agent read the cancel before it
//   --wait-background      after the idle, wait until the background list is []
//   --timeout-ms N         limit of the case (default 5000)
//   --agent-fds IN,OUT     instead of -- AGENT_COMMAND: talk to an agent already
//                          running, over two inherited pipe descriptors (IN is
//                          the agent's stdin, OUT its stdout); e.g. an agent the
//                          caller runs in its own process
//   --shared-agent         (with --cases) cases with this flag and the same agent
//                          command share one agent process: one connection, one
//                          initialize, a session of their own each
// One case prints one JSON summary on stdout; exits 0 when every check passed,
// 1 on a mismatch, 2 on a usage error or timeout.
//
// --cases FILE (`-` = stdin) runs many cases in this one process, so each case
// does not pay Node's and the SDK's start-up: FILE holds a JSON array of
// {"name": ..., "args": [the options of one run above]}. Up to --jobs agents
// (default 2 x CPUs) run at once, in the order of their first case. Prints one line per case as it ends,
// {"name", "code", "ms", "summary"} (code as above, ms since its agent started);
// exits 0 when every case passed.
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { availableParallelism } from "node:os";
import { Readable, Writable } from "node:stream";

// Loading the SDK takes ~0.4 s of CPU (its zod schemas): the agents are started
// before it is awaited, so their start-up overlaps it.
const loadingSdk = import("@agentclientprotocol/sdk/experimental/v2");
/** The SDK module, set once loaded (before any connection starts). */
let acp = null;

class UsageError extends Error {}

function parseArgs(argv) {
  const options = {
    prompt: "hello",
    expectStop: "end_turn",
    expectText: null,
    permission: "allow",
    expectPermission: false,
    cancel: false,
    requestAfterCancel: null,
    waitBackground: false,
    sharedAgent: false,
    timeoutMs: 5000,
    command: [],
    agentFds: null,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      i += 1;
      if (i >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[i];
    };
    if (arg === "--") {
      options.command = argv.slice(i + 1);
      break;
    } else if (arg === "--prompt") options.prompt = value();
    else if (arg === "--expect-stop") options.expectStop = value();
    else if (arg === "--expect-text") options.expectText = value();
    else if (arg === "--permission") options.permission = value();
    else if (arg === "--expect-permission") options.expectPermission = true;
    else if (arg === "--cancel") options.cancel = true;
    else if (arg === "--request-after-cancel") options.requestAfterCancel = value();
    else if (arg === "--wait-background") options.waitBackground = true;
    else if (arg === "--shared-agent") options.sharedAgent = true;
    else if (arg === "--timeout-ms") options.timeoutMs = Number(value());
    else if (arg === "--agent-fds") {
      options.agentFds = value().split(",").map(Number);
      if (options.agentFds.length !== 2 || !options.agentFds.every(Number.isInteger)) {
        throw new UsageError("--agent-fds needs IN,OUT (two descriptor numbers)");
      }
    }
    else throw new UsageError(`unknown option ${arg}`);
  }
  if ((options.command.length === 0) === (options.agentFds === null)) {
    throw new UsageError("give either -- AGENT_COMMAND or --agent-fds IN,OUT");
  }
  if (!["allow", "reject", "cancel"].includes(options.permission)) {
    throw new UsageError("--permission must be allow, reject or cancel");
  }
  return options;
}

function usage(message) {
  process.stderr.write(`ts_client.mjs: ${message}\n`);
  process.exit(2);
}

/** One case: its options, what it saw so far (a timeout still reports that) and its result. */
function newCase(name, options) {
  return {
    name,
    options,
    userMessageIds: new Set(),
    text: [],
    result: null,
    summary: {
      ok: false,
      agent: null,
      protocolVersion: null,
      sessionId: null,
      messageId: null,
      userMessageSeen: false,
      states: [],
      stopReason: null,
      error: null,
      text: "",
      updateKinds: [],
      permissionRequests: [],
      backgroundSnapshots: [],
      mismatches: [],
      sdkErrors: [],
      stderrTail: "",
    },
  };
}

// The SDK reports messages it rejects (e.g. a session/update that fails its
// schema) with console.error and drops them: record those as mismatches of the
// cases on that connection. The error does not name its session, so the agent
// (one connection) is found through the async context the connection runs in;
// an error outside any agent's context counts against every unfinished case.
const agentContext = new AsyncLocalStorage();
const allCases = [];
const consoleError = console.error;
console.error = (...args) => {
  const line = args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
  for (const c of agentContext.getStore()?.cases ?? allCases) {
    if (c.result === null) c.summary.sdkErrors.push(line);
  }
  consoleError(...args);
};

function idOf(item) {
  return item.terminalId ?? item.toolCallId ?? JSON.stringify(item);
}

/**
 * The agent's pipes: {stdin, stdout, stderr(), exited, kill(), onError(reason => ...)}.
 * A command is started here; with `agentFds` the agent already runs (elsewhere)
 * and "exited" means its stdout closed.
 */
function openAgent({ command, agentFds }) {
  if (agentFds !== null) {
    const [inFd, outFd] = agentFds;
    const stdin = new net.Socket({ fd: inFd, readable: false, writable: true });
    const stdout = new net.Socket({ fd: outFd, readable: true, writable: false });
    return {
      stdin,
      stdout,
      stderr: () => "",
      exited: new Promise((resolve) => stdout.on("close", resolve)),
      kill: () => {
        stdin.destroy();
        stdout.destroy();
      },
      onError: (handler) => {
        for (const pipe of [stdin, stdout]) {
          pipe.on("error", (error) => handler(`agent pipe error: ${error.message}`));
        }
      },
    };
  }
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (data) => {
    stderr = (stderr + data.toString()).slice(-4000);
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: () => stderr,
    // "exit" never comes when the command could not be started at all.
    exited: new Promise((resolve) => {
      child.on("exit", resolve);
      child.on("error", resolve);
    }),
    kill: () => child.kill("SIGKILL"),
    onError: (handler) =>
      child.on("error", (error) => handler(`cannot start agent: ${error.message}`)),
  };
}

/** Runs one agent and its cases (several when they share it); resolves when all ended. */
function runAgent(unit, onResult) {
  return agentContext.run(unit, () => runAgentInContext(unit, onResult));
}

async function runAgentInContext(unit, onResult) {
  const { cases } = unit;
  const started = performance.now();
  let agent = null;
  let allEnded;
  const ended = new Promise((resolve) => {
    allEnded = resolve;
  });
  const timers = [];

  const finish = (c, code, reason) => {
    if (c.result !== null) return;
    const { summary } = c;
    if (reason) summary.mismatches.push(reason);
    for (const error of summary.sdkErrors) summary.mismatches.push(`SDK rejected a message: ${error}`);
    summary.text = c.text.join("");
    summary.userMessageSeen = summary.messageId !== null && c.userMessageIds.has(summary.messageId);
    summary.stderrTail = agent?.stderr().slice(-1000) ?? "";
    summary.ok = code === 0 && summary.mismatches.length === 0;
    const ms = Math.round(performance.now() - started);
    c.result = { name: c.name, code: summary.ok ? 0 : Math.max(code, 1), ms, summary };
    onResult(c.result);
    if (cases.every((other) => other.result !== null)) allEnded();
  };
  const finishAll = (code, reason) => {
    for (const c of cases) finish(c, code, reason);
  };
  try {
    agent = openAgent(cases[0].options);
  } catch (error) {
    finishAll(2, `cannot open the agent: ${error.message}`); // e.g. a bad --agent-fds
    return;
  }
  agent.onError((reason) => finishAll(2, reason));
  for (const c of cases) {
    const limit = c.options.timeoutMs;
    timers.push(setTimeout(() => finish(c, 2, `timeout after ${limit} ms`), limit));
  }

  acp = await loadingSdk;
  const bySession = new Map();
  const app = acp
    .client({ name: "acp-lite-interop-ts-client" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
      const c = bySession.get(params.sessionId) ?? (cases.length === 1 ? cases[0] : null);
      if (c === null) {
        for (const other of cases) {
          other.summary.mismatches.push(`permission request for unknown session ${params.sessionId}`);
        }
        return { outcome: { outcome: "cancelled" } };
      }
      const record = { title: params.title, kinds: params.options.map((o) => o.kind) };
      c.summary.permissionRequests.push(record);
      // Already withdrawn with $/cancel_request: the spec's answer is "cancelled".
      if (signal.aborted) return { outcome: { outcome: "cancelled" } };
      if (c.options.permission === "cancel") return { outcome: { outcome: "cancelled" } };
      const wanted = c.options.permission === "allow" ? "allow_" : "reject_";
      const option = params.options.find((o) => o.kind.startsWith(wanted)) ?? params.options[0];
      record.answer = option.optionId;
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

  const clientError = (error) => `client error: ${error?.message ?? error}`;
  app
    .connectWith(stream, async (ctx) => {
      await initialize(ctx, cases);
      await Promise.all(
        cases.map((c) =>
          runSession(ctx, c, bySession).then(
            () => finish(c, 0),
            (error) => finish(c, 1, clientError(error)),
          ),
        ),
      );
    })
    .then(
      () => finishAll(0),
      (error) => finishAll(1, clientError(error)),
    );

  await ended;
  for (const timer of timers) clearTimeout(timer);
  agent.stdin.end();
  const killer = setTimeout(agent.kill, 2000);
  await Promise.race([agent.exited, new Promise((r) => setTimeout(r, 2100))]);
  clearTimeout(killer);
}

async function initialize(ctx, cases) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "ts-interop-client", version: "2.4.0" },
    capabilities: {},
  });
  for (const { summary } of cases) {
    summary.agent = init.info;
    summary.protocolVersion = init.protocolVersion;
    if (init.protocolVersion !== 2) {
      summary.mismatches.push(`protocolVersion ${init.protocolVersion}, expected 2`);
    }
    if (typeof init.info?.name !== "string") {
      summary.mismatches.push("initialize response has no info.name");
    }
  }
}

/** One session of case `c` on the connection `ctx`: one prompt, then the checks. */
async function runSession(ctx, c, bySession) {
  const { options, summary, userMessageIds, text } = c;
  const check = (condition, message) => {
    if (!condition) summary.mismatches.push(message);
  };
  const session = await ctx.buildSession(process.cwd()).start();
  summary.sessionId = session.sessionId;
  bySession.set(session.sessionId, c);
  check(typeof session.sessionId === "string", "session/new returned no sessionId");

  // Entities announced / finalised, to check the background rules.
  const announced = new Set();
  const finalised = new Set();
  let listed = new Set();
  let inserted = false;
  let running = false;
  let cancelled = false;

  const maybeCancel = async () => {
    if (options.cancel && inserted && running && !cancelled) {
      cancelled = true;
      await ctx.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      if (options.requestAfterCancel !== null) {
        // An error answer (e.g. -32601) proves the reading as well as a result.
        await ctx.request(options.requestAfterCancel, {}).catch(() => {});
      }
    }
  };

  const promptDone = session.prompt(options.prompt).then(async (response) => {
    summary.messageId = response.messageId;
    inserted = true;
    check(
      typeof response.messageId === "string" && response.messageId.length > 0,
      "prompt response has no messageId",
    );
    await maybeCancel();
  });
  let promptError = null;
  promptDone.catch((error) => {
    promptError = error;
  });

  const apply = (update) => {
    const kind = update.sessionUpdate;
    summary.updateKinds.push(kind === "state_update" ? `state:${update.state}` : kind);
    if (kind === "user_message" || kind === "user_message_chunk") {
      userMessageIds.add(update.messageId);
    } else if (kind === "agent_message_chunk" && update.content?.type === "text") {
      text.push(update.content.text);
    } else if (kind === "agent_message" && Array.isArray(update.content)) {
      for (const block of update.content) if (block.type === "text") text.push(block.text);
    } else if (kind === "tool_call_update") {
      announced.add(update.toolCallId);
      if (["completed", "failed", "cancelled"].includes(update.status)) {
        finalised.add(update.toolCallId);
      }
    } else if (kind === "terminal_update") {
      announced.add(update.terminalId);
      if (update.exitStatus) finalised.add(update.terminalId);
    } else if (kind === "state_update") {
      summary.states.push(update.state);
      if (update.state === "running" || update.state === "requires_action") running = true;
      if (Array.isArray(update.background)) {
        const now = new Set(update.background.map(idOf));
        summary.backgroundSnapshots.push([...now]);
        for (const id of now) {
          check(announced.has(id), `background item ${id} listed before it was announced`);
        }
        for (const id of listed) {
          if (!now.has(id)) {
            check(finalised.has(id), `background item ${id} removed before it was finalised`);
          }
        }
        listed = now;
      }
    }
  };

  // Foreground: read until the idle that ends the work started by the prompt.
  let idle = null;
  while (idle === null) {
    const message = await session.nextUpdate();
    apply(message.update);
    await maybeCancel();
    if (message.kind === "stop" && running) idle = message.update;
  }
  await promptDone.catch(() => {});
  if (promptError) {
    check(false, `prompt failed: ${promptError.message ?? promptError}`);
  }
  summary.stopReason = idle.stopReason ?? null;
  summary.error = idle.error ?? null;

  // Leading idle snapshots are initial state, not transitions (spec: "Initial state
  // and synchronization"); the work itself must start with an active state.
  const firstActive = summary.states.find((state) => state !== "idle");
  check(
    firstActive === "running" || firstActive === "requires_action",
    `first non-idle state was ${firstActive}, expected running or requires_action`,
  );
  check(
    userMessageIds.has(summary.messageId),
    `no user_message with the prompt's messageId ${summary.messageId}`,
  );
  check(
    summary.stopReason === options.expectStop,
    `stopReason ${summary.stopReason}, expected ${options.expectStop}`,
  );
  if (summary.stopReason === "error") {
    check(
      summary.error && Number.isInteger(summary.error.code) && typeof summary.error.message === "string",
      "stopReason error without an error object {code, message}",
    );
  }
  if (options.expectText !== null) {
    const got = text.join("");
    check(
      got.includes(options.expectText),
      `agent text ${JSON.stringify(got)} does not contain ${JSON.stringify(options.expectText)}`,
    );
  }
  if (options.expectPermission) {
    check(summary.permissionRequests.length > 0, "no session/request_permission arrived");
  }

  if (options.waitBackground) {
    check(listed.size > 0 || summary.backgroundSnapshots.some((s) => s.length > 0),
      "no background work was ever listed");
    while (listed.size > 0) {
      const message = await session.nextUpdate();
      apply(message.update);
    }
  }
  session.dispose();
}

/** Groups cases into agents: --shared-agent cases with one command (or fds) share one. */
function agentsFor(cases) {
  const units = [];
  const shared = new Map();
  for (const c of cases) {
    const key = JSON.stringify([c.options.command, c.options.agentFds]);
    if (c.options.sharedAgent && shared.has(key)) {
      shared.get(key).cases.push(c);
      continue;
    }
    const unit = { cases: [c] };
    if (c.options.sharedAgent) shared.set(key, unit);
    units.push(unit);
  }
  return units;
}

async function runAll(cases, jobs, onResult) {
  allCases.push(...cases);
  const units = agentsFor(cases);
  let next = 0;
  const worker = async () => {
    while (next < units.length) {
      const unit = units[next];
      next += 1;
      await runAgent(unit, onResult);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, units.length) }, worker));
}

function readCases(argv) {
  let file = null;
  let jobs = availableParallelism() * 2;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--cases" && i + 1 < argv.length) file = argv[(i += 1)];
    else if (argv[i] === "--jobs" && i + 1 < argv.length) jobs = Number(argv[(i += 1)]);
    else throw new UsageError(`unknown option with --cases: ${argv[i]}`);
  }
  if (file === null) throw new UsageError("--cases needs a file");
  if (!(jobs >= 1)) throw new UsageError("--jobs must be at least 1");
  const specs = JSON.parse(readFileSync(file === "-" ? 0 : file, "utf8"));
  if (!Array.isArray(specs)) throw new UsageError("--cases: the file must hold a JSON array");
  const names = new Set();
  const cases = specs.map((spec) => {
    if (typeof spec?.name !== "string" || !Array.isArray(spec.args)) {
      throw new UsageError("--cases: each case is {name, args}");
    }
    if (names.has(spec.name)) throw new UsageError(`--cases: duplicate case ${spec.name}`);
    names.add(spec.name);
    try {
      return newCase(spec.name, parseArgs(spec.args));
    } catch (error) {
      throw error instanceof UsageError ? new UsageError(`case ${spec.name}: ${error.message}`) : error;
    }
  });
  return { cases, jobs };
}

async function main(argv) {
  let failed = false;
  if (argv[0] === "--cases") {
    const { cases, jobs } = readCases(argv);
    await runAll(cases, jobs, (result) => {
      failed ||= result.code !== 0;
      process.stdout.write(`${JSON.stringify(result)}\n`);
    });
    return failed ? 1 : 0;
  }
  const single = newCase("case", parseArgs(argv));
  let code = 2;
  await runAll([single], 1, (result) => {
    code = result.code;
    process.stdout.write(`${JSON.stringify(result.summary)}\n`);
  });
  return code;
}

main(process.argv.slice(2)).then(
  // Exit at once: a timed-out case may leave SDK promises pending forever.
  (code) => process.exit(code),
  (error) => (error instanceof UsageError ? usage(error.message) : usage(String(error?.stack ?? error))),
);
