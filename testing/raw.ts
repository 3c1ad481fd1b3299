/** Raw HTTP over a socket, for requests no HTTP client would send (bad methods, odd targets). Test support. */
import { connect } from 'node:net';

/** Sends `bytes` to the server and resolves with the status code of the first answer (0 if none). */
export function rawRequest(
  baseUrl: string,
  bytes: string | Buffer,
  timeoutMs = 5_000,
): Promise<{ status: number; head: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      const head = received.split('\r\n\r\n')[0] ?? '';
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head });
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n\r\n')) {
        socket.destroy();
        finish();
      }
    });
    socket.on('error', (error) => {
      if (received) finish();
      else {
        clearTimeout(timer);
        reject(error);
      }
    });
    socket.on('close', () => {
      if (!received.includes('\r\n\r\n')) finish();
    });
    socket.write(bytes);
  });
}
