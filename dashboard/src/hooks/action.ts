import { useCallback, useState } from 'react';
import { ApiError } from '../api/client';

/**
 * A user action that calls the API (commit, approve, revoke…): tracks that it is under way and
 * keeps its error message to show. `run` resolves with the action's result, or undefined when it failed.
 */
export function useAction(describeError: (error: Error) => string = (error) => error.message) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async <T>(action: () => Promise<T>): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        return await action();
      } catch (caught) {
        setError(describeError(caught instanceof Error ? caught : new ApiError(0, String(caught), '')));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [describeError],
  );
  return { busy, error, run };
}
