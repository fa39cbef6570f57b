// fauxqs on loopback, for scripts/emulators.sh: node serve.mjs PORT
//
// Through its library: its command-line entry point (and startFauxqs) listen on
// every interface and log each request whatever FAUXQS_LOGGER says.
// FAUXQS_RECEIPT_HANDLE_CHARS=N lengthens every receipt handle it gives out to
// N characters, as long as SQS's own (about 320 to 430), so that what a client
// holds per message is measured at its real size; fauxqs's own are 36.
import { randomBytes } from "node:crypto";
import { buildApp } from "fauxqs";
import { SqsQueue, SqsStore } from "./node_modules/fauxqs/dist/sqs/sqsStore.js";

const port = Number.parseInt(process.argv[2] ?? "", 10);
if (!Number.isInteger(port) || port <= 0) {
  console.error("usage: node serve.mjs PORT");
  process.exit(2);
}

const handleChars = Number.parseInt(process.env.FAUXQS_RECEIPT_HANDLE_CHARS ?? "0", 10);
if (handleChars > 36) {
  const lengthen = (queue, received) => {
    for (const message of received) {
      const short = message.ReceiptHandle;
      const entry = queue.inflightMessages.get(short);
      if (!entry) continue;
      const long = short + randomBytes(handleChars).toString("base64url").slice(0, handleChars - short.length);
      queue.inflightMessages.delete(short);
      entry.receiptHandle = long;
      queue.inflightMessages.set(long, entry);
      message.ReceiptHandle = long;
    }
    return received;
  };
  for (const name of ["dequeue", "dequeueFifo"]) {
    const original = SqsQueue.prototype[name];
    SqsQueue.prototype[name] = function (...args) {
      return lengthen(this, original.apply(this, args));
    };
  }
}

// Queue URLs on the address asked (http://127.0.0.1:PORT/000000000000/NAME, as
// moto's and LocalStack's), not on sqs.REGION.localhost, which not every
// resolver knows.
const sqsStore = new SqsStore();
sqsStore.host = undefined;
const app = buildApp({ logger: false, stores: { sqsStore } });
await app.listen({ port, host: "127.0.0.1" });
console.log(`fauxqs listening on http://127.0.0.1:${port}`);
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => app.close().then(() => process.exit(0)));
}
