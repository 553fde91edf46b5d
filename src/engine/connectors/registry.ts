import type { Provider } from "../../api/index.js";
import { createGitHub } from "./providers/github.js";
import { createGmail } from "./providers/gmail.js";
import { createGoogleDrive } from "./providers/google-drive.js";
import { createGranola } from "./providers/granola.js";
import { createNotion } from "./providers/notion.js";
import { createOneDrive } from "./providers/onedrive.js";
import { createS3 } from "./providers/s3.js";
import { createWebCrawler } from "./providers/web-crawler.js";
import type { ConnectorProvider, ProviderOptions } from "./types.js";

/** Every connector provider, by the API's provider name. */
export type ProviderRegistry = Readonly<Record<Provider, ConnectorProvider>>;

export function createProviderRegistry(opts: ProviderOptions = {}): ProviderRegistry {
  return {
    notion: createNotion(opts),
    "google-drive": createGoogleDrive(opts),
    onedrive: createOneDrive(opts),
    gmail: createGmail(opts),
    github: createGitHub(opts),
    "web-crawler": createWebCrawler(),
    s3: createS3(),
    granola: createGranola(),
  };
}
