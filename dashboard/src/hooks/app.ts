import { createContext, useContext } from 'react';
import type { WhoAmIResponse } from '@spectator/shared';
import type { ApiClient } from '../api/client';

/** What every page of a signed-in project needs: the API client, the project slug, the token's identity and sign-out. */
export interface AppContextValue {
  api: ApiClient;
  project: string;
  /** The signed-in token (`GET /me`); null until known or when the backend cannot say (then every action shows, and the backend decides). */
  who: WhoAmIResponse | null;
  signOut(): void;
}

export const AppContext = createContext<AppContextValue | null>(null);

/** The signed-in project's context; only used below the signed-in shell. */
export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error('useApp: used outside the signed-in shell');
  return value;
}
