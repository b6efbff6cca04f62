import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { KIND_LABELS } from '../lib/versions';

/**
 * The environment (CI, Staging, Production) and the window in days a view of traffic covers, as
 * one inline form (Consumers, Usage).
 */
export function EnvironmentWindow({
  environment,
  onEnvironment,
  days,
  onDays,
  windows,
}: {
  environment: MatrixKind;
  onEnvironment: (kind: MatrixKind) => void;
  days: number;
  onDays: (days: number) => void;
  /** The windows offered, in days. */
  windows: readonly number[];
}) {
  return (
    <form className="inline-form" onSubmit={(e) => e.preventDefault()}>
      <label>
        Environment
        <select value={environment} onChange={(e) => onEnvironment(e.target.value as MatrixKind)}>
          {MATRIX_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Window
        <select value={days} onChange={(e) => onDays(Number(e.target.value))}>
          {windows.map((n) => (
            <option key={n} value={n}>
              last {n} days
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}
