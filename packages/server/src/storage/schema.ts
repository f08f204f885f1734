/** Table shapes as Kysely sees them. Only storage/ imports this file. */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  provider: string;
  subject: string;
  login: string;
  created_at: number;
  drop_count: Generated<number>;
}

export interface TokensTable {
  id: string;
  hash: string;
  account_id: string;
  label: string | null;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface DropsTable {
  slug: string;
  account_id: string;
  title: string;
  description: string | null;
  passcode_hash: string | null;
  passcode_generation: Generated<number>;
  latest_version: number;
  /** Highest version number ever issued: numbers are never reused. */
  last_issued_version: number;
  version_count: number;
  view_count: Generated<number>;
  /** JSON object of string to string. */
  metadata: string;
  created_at: number;
  updated_at: number;
}

export interface VersionsTable {
  slug: string;
  version: number;
  html: string;
  size_bytes: number;
  context: string | null;
  created_at: number;
}

export interface RateWindowsTable {
  key: string;
  count: number;
  ends_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface DeviceRequestsTable {
  id: string;
  poll_hash: string;
  user_code: string;
  label: string | null;
  /** pending | approved | denied | claimed */
  status: string;
  account_id: string | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

export interface Database {
  device_requests: DeviceRequestsTable;
  settings: SettingsTable;
  accounts: AccountsTable;
  tokens: TokensTable;
  drops: DropsTable;
  versions: VersionsTable;
  rate_windows: RateWindowsTable;
}
