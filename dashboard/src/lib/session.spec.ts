import { clearSession, loadSession, saveSession } from './session';

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
    items,
  };
}

describe('session', () => {
  it('keeps and forgets the token and project', () => {
    const storage = memoryStorage();
    saveSession({ token: 't', project: 'demo' }, storage);
    expect(loadSession(storage)).toEqual({ token: 't', project: 'demo' });
    clearSession(storage);
    expect(loadSession(storage)).toBeNull();
  });

  it.each(['not json', '{}', '{"token":""}', '{"token":5}'])('treats %s as signed out', (text) => {
    const storage = memoryStorage();
    storage.setItem('spectator.session', text);
    expect(loadSession(storage)).toBeNull();
  });
});
