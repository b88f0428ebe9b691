/** Our real logger (src/logger.ts) at debug, writing into memory: the lines it wrote, and them joined. */
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';

export function capturedLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger('debug', { destination }), lines, text: () => lines.join('') };
}
