// Reads many SSE streams the way the official TypeScript MCP SDK's
// StreamableHTTPClientTransport does (TextDecoderStream, then
// eventsource-parser's EventSourceParserStream with onRetry), and reports
// what the SDK sees of each: every event the parser emits (id, event, data),
// in order, and every retry, in order (the SDK only keeps the last retry for
// its next reconnect, so where a retry falls between events is not reported:
// onRetry runs while the events still wait in the stream's queue).
//
// Input (stdin): one JSON array per line, the stream's body chunks as
// base64 strings, fed to the reader one by one as they would arrive.
// Output (stdout): one JSON object per input line, in order:
// {"events":[{"id":...,"event":...,"data":...}, ...],"retries":[N, ...]},
// with absent fields omitted (undefined in the parser) and "error" when the
// pipeline failed.
import { EventSourceParserStream } from "eventsource-parser/stream";
import { readFileSync } from "node:fs";

async function readOne(chunks) {
  const events = [];
  const retries = [];
  const body = new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(Buffer.from(c, "base64"));
      controller.close();
    },
  });
  const reader = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => retries.push(ms) }))
    .getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const ev = { data: value.data };
      if (value.id !== undefined) ev.id = value.id;
      if (value.event !== undefined) ev.event = value.event;
      events.push(ev);
    }
  } catch (err) {
    return { events, retries, error: String(err) };
  }
  return { events, retries };
}

const lines = readFileSync(0, "utf8").split("\n").filter((l) => l !== "");
const out = [];
for (const line of lines) out.push(JSON.stringify(await readOne(JSON.parse(line))));
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
