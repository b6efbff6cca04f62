import { createRootLogger, defaultLogFormat } from './log';

/** A logger writing into memory; returns it and what it wrote. */
function capture(format: 'json' | 'pretty') {
  const lines: string[] = [];
  const log = createRootLogger('info', { write: (line: string) => void lines.push(line) }, format);
  return { log, lines };
}

describe('agent logs', () => {
  it('are readable lines on a terminal and JSON lines otherwise, by default', () => {
    expect(defaultLogFormat(true)).toBe('pretty');
    expect(defaultLogFormat(false)).toBe('json');
  });

  it('pretty: one line with time, level, module, message and the fields, the token redacted', () => {
    const { log, lines } = capture('pretty');
    log.child({ module: 'agent' }).info({ proxy: 'http://127.0.0.1:4000', token: 'secret-token' }, 'agent started');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: agent: agent started \{"proxy":"http:\/\/127\.0\.0\.1:4000","token":"\[redacted\]"\}\n$/,
    );
    expect(lines[0]).not.toContain('secret-token');
  });

  it('json: one object per line, the token redacted', () => {
    const { log, lines } = capture('json');
    log.child({ module: 'agent' }).warn({ token: 'secret-token' }, 'x');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 40,
      module: 'agent',
      msg: 'x',
      token: '[redacted]',
      name: 'spectator-agent',
    });
  });
});
