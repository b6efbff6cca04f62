import { X509Certificate } from 'node:crypto';
import { watchFile, unwatchFile } from 'node:fs';
import { readFile } from 'node:fs/promises';
import tls from 'node:tls';
import { ConfigError, type TlsFiles } from '../config';
import type { Logger } from '../log';
import type { TlsCredentials } from './server';

/**
 * Reads the proxy's certificate chain and key and checks they form a usable pair, so a bad file
 * stops the agent at start (or keeps the previous pair on reload) instead of failing handshakes.
 * @throws ConfigError naming the option and file at fault.
 */
export async function readTlsFiles(files: TlsFiles): Promise<TlsCredentials> {
  const [cert, key] = await Promise.all([
    readOption(files.certPath, '--tls-cert (SPECTATOR_TLS_CERT)'),
    readOption(files.keyPath, '--tls-key (SPECTATOR_TLS_KEY)'),
  ]);
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError([
      `--tls-cert/--tls-key: ${files.certPath} and ${files.keyPath} are not a PEM certificate and its private key (${(err as Error).message})`,
    ]);
  }
  return { cert, key };
}

/**
 * Reads the CA certificate(s) trusted for an https:// upstream.
 * @throws ConfigError when the file cannot be read or holds no PEM certificate.
 */
export async function readUpstreamCa(path: string): Promise<Buffer> {
  const option = '--upstream-ca (SPECTATOR_UPSTREAM_CA)';
  const pem = await readOption(path, option);
  try {
    new X509Certificate(pem);
  } catch (err) {
    throw new ConfigError([`${option}: ${path} is not a PEM certificate (${(err as Error).message})`]);
  }
  return pem;
}

/** A file an option names. @throws ConfigError naming the option and the file when it cannot be read. */
async function readOption(path: string, option: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new ConfigError([
      `${option}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    ]);
  }
}

/**
 * Re-reads the pair whenever either file changes (a certificate rotated by cert-manager or a
 * mounted Secret update) and hands it to `apply`; a broken pair is logged and the last good one
 * kept. Returns the function that stops watching.
 */
export function watchTlsFiles(
  files: TlsFiles,
  intervalMs: number,
  apply: (credentials: TlsCredentials) => void,
  log: Logger,
): () => void {
  let reading = Promise.resolve();
  const reload = (): void => {
    reading = reading.then(async () => {
      try {
        apply(await readTlsFiles(files));
        log.info({ cert: files.certPath }, 'TLS certificate reloaded');
      } catch (err) {
        log.error({ problem: (err as Error).message }, 'TLS certificate not reloaded; keeping the previous one');
      }
    });
  };
  const paths = [files.certPath, files.keyPath];
  for (const path of paths) watchFile(path, { interval: intervalMs, persistent: false }, reload);
  return () => {
    for (const path of paths) unwatchFile(path, reload);
  };
}
