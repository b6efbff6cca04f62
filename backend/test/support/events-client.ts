import { type DashboardEvent, ROUTES } from '@spectator/shared';
import WebSocket from 'ws';

/** A dashboard listening to project events; `token` travels as a header, or as the browser sends it (a sub-protocol). */
export async function listenToEvents(
  baseUrl: string,
  project: string,
  token: string,
  via: 'header' | 'protocol',
): Promise<{ events: DashboardEvent[]; close(): void; socket: WebSocket }> {
  const url = `${baseUrl.replace(/^http/, 'ws')}${ROUTES.projectEvents(project)}`;
  const socket =
    via === 'header'
      ? new WebSocket(url, { headers: { authorization: `Bearer ${token}` } })
      : new WebSocket(url, ['spectator.v1', `bearer.${token}`]);
  const events: DashboardEvent[] = [];
  socket.on('message', (data) => events.push(JSON.parse(data.toString()) as DashboardEvent));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode })),
    );
    socket.once('error', reject);
  });
  return { events, socket, close: () => socket.close() };
}
