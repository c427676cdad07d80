// Closed-loop load of one GET with Node's own fetch (undici, keep-alive), for bench/throughput.py.
//
//   node bench/load.mjs URL TOKEN
//
// Stays up and reads one JSON command per stdin line, {"concurrency": 4, "seconds": 2}: that many workers each
// send the request, read and parse the JSON body, and send the next, until the time is up (calls in flight then
// still finish). Answers each command with one JSON line on stdout, {"calls", "errors", "elapsedMs", "failure"};
// exits when stdin closes. A response that is not 2xx counts as an error; `failure` describes the first one.
import { createInterface } from "node:readline";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node load.mjs URL TOKEN");
  process.exit(2);
}
const headers = { Authorization: `Bearer ${token}`, Accept: "application/json" };

async function slice(concurrency, seconds) {
  let calls = 0;
  let errors = 0;
  let failure = null;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      try {
        const response = await fetch(url, { headers });
        const body = await response.text();
        if (response.ok) JSON.parse(body);
        else {
          errors++;
          failure ??= `HTTP ${response.status}: ${body.slice(0, 300)}`;
        }
      } catch (error) {
        errors++;
        failure ??= String(error?.cause ?? error);
      }
      calls++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { calls, errors, elapsedMs: performance.now() - started, failure };
}

for await (const line of createInterface({ input: process.stdin })) {
  const { concurrency, seconds } = JSON.parse(line);
  process.stdout.write(JSON.stringify(await slice(concurrency, seconds)) + "\n");
}
