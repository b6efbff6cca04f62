import { createContext, useContext } from 'react';
import type { ApiClient } from '../api/client';

/** What every page of a signed-in project needs: the API client, the project slug and sign-out. */
export interface AppContextValue {
  api: ApiClient;
  project: string;
  signOut(): void;
}

export const AppContext = createContext<AppContextValue | null>(null);

/** The signed-in project's context; only used below the signed-in shell. */
export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error('useApp: used outside the signed-in shell');
  return value;
}
