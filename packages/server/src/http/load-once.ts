/**
 * Loads something heavy on first use instead of at start-up (the MCP SDK, Express and the MCP tools: the service
 * starts without them, docs/architecture.md, "Process lifecycle").
 */

/** `load` run once, by the first caller; concurrent callers share its promise, and a failed load is tried again. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
