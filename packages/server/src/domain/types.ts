/** Domain values. Rows never leave storage/: the store maps them to these. Times are Unix milliseconds. */

export type Metadata = Readonly<Record<string, string>>;

export interface Account {
  readonly id: string;
  readonly provider: string;
  readonly subject: string;
  readonly login: string;
  readonly createdAt: number;
  readonly dropCount: number;
}

export interface TokenInfo {
  readonly id: string;
  readonly accountId: string;
  readonly label: string | null;
  readonly createdAt: number;
  readonly lastUsedAt: number | null;
}

/** A drop as the owner sees it (never includes HTML bodies). */
export interface DropRecord {
  readonly slug: string;
  readonly accountId: string;
  readonly title: string;
  readonly description: string | null;
  readonly locked: boolean;
  /** Bumped on every passcode change; capabilities signed for an older generation stop working. */
  readonly passcodeGeneration: number;
  readonly latestVersion: number;
  readonly versionCount: number;
  readonly viewCount: number;
  readonly metadata: Metadata;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface VersionInfo {
  readonly slug: string;
  readonly version: number;
  readonly sizeBytes: number;
  readonly hasContext: boolean;
  readonly createdAt: number;
}

export interface VersionRecord extends VersionInfo {
  readonly context: string | null;
}

/** The stored document of one version, for serving. */
export interface VersionContent {
  readonly version: number;
  readonly html: string;
  readonly createdAt: number;
}

export type SortBy = 'created_at' | 'updated_at' | 'view_count';
export type SortOrder = 'asc' | 'desc';

export interface ListQuery {
  readonly page: number;
  readonly pageSize: number;
  readonly sortBy: SortBy;
  readonly sortOrder: SortOrder;
  /** AND-combined equality filters on metadata values. */
  readonly metadata: Metadata;
  /** Case-insensitive substring of the title; absent or empty means no filter. ANDed with the metadata filters. */
  readonly titleContains?: string;
}

/** Stored state of a device-code request; the public poll status is derived from it (domain/device-flow.ts). */
export type DeviceRequestState = 'pending' | 'approved' | 'denied' | 'claimed';

export interface DeviceRequest {
  readonly id: string;
  /** Normalised user code, 8 characters without the dash. */
  readonly userCode: string;
  readonly label: string | null;
  readonly state: DeviceRequestState;
  readonly accountId: string | null;
  readonly createdAt: number;
  readonly expiresAt: number;
}
