/** Bad connector input (config, selection) or a provider that is not configured here: a 400. */
export class ConnectorInputError extends Error {
  override name = "ConnectorInputError";
  readonly status = 400;
}

/** A provider this server is not set up for (no OAuth app): the operator's to fix, not the caller's. */
export class ConnectorSetupError extends ConnectorInputError {
  override name = "ConnectorSetupError";
}

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
