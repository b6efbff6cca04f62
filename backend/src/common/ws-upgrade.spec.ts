import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { keepAlive } from './ws-upgrade';

/** The parts of a socket keepAlive uses: events, isPaused, ping and terminate. */
function fakeSocket(): EventEmitter & { isPaused: boolean; ping: jest.Mock; terminate: jest.Mock } {
  return Object.assign(new EventEmitter(), { isPaused: false, ping: jest.fn(), terminate: jest.fn() });
}

describe('keepAlive', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('terminates a socket that sent nothing back for a whole period', () => {
    const ws = fakeSocket();
    const stop = keepAlive(ws as unknown as WebSocket, 1000);
    jest.advanceTimersByTime(1000);
    expect(ws.ping).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(ws.terminate).toHaveBeenCalledTimes(1);
    stop();
  });

  it('keeps a socket whose pong waits behind its data frames, as long as frames arrive', () => {
    const ws = fakeSocket();
    const stop = keepAlive(ws as unknown as WebSocket, 1000);
    for (let period = 0; period < 10; period++) {
      jest.advanceTimersByTime(500);
      ws.emit('message', Buffer.from('{"type":"batch"}'), false);
      jest.advanceTimersByTime(500);
    }
    expect(ws.terminate).not.toHaveBeenCalled();
    ws.emit('pong');
    jest.advanceTimersByTime(1000);
    expect(ws.terminate).not.toHaveBeenCalled();
    stop();
  });

  it('does not judge a socket while reading it is paused', () => {
    const ws = fakeSocket();
    const stop = keepAlive(ws as unknown as WebSocket, 1000);
    jest.advanceTimersByTime(1000);
    ws.isPaused = true;
    jest.advanceTimersByTime(5000);
    expect(ws.terminate).not.toHaveBeenCalled();
    ws.isPaused = false;
    jest.advanceTimersByTime(1000);
    expect(ws.terminate).toHaveBeenCalledTimes(1);
    stop();
  });
});
