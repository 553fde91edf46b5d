/** The source's API answered an error or something unusable; the sync run fails with this message. */
export class ConnectorApiError extends Error {
  override name = "ConnectorApiError";
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}
