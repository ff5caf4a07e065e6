import { env } from "cloudflare:workers";
import { createR2BlobStore, type R2BucketLike } from "../../src/services/kb/blob-store";
import { blobStoreContract } from "../support/blob-store-contract";

// The R2 bucket wrangler.toml binds (KB_ASSETS), simulated by the test pool's workerd.
blobStoreContract("R2", () => createR2BlobStore(env.KB_ASSETS as R2BucketLike));
