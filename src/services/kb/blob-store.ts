/**
 * Where the bytes of uploaded assets live: an R2 bucket on Workers, files under DATA_DIR on Node.
 * Keys are ours (`kb-assets/<assetId>`), never taken from a client.
 */
export interface BlobStore {
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(key: string): Promise<{ bytes: Uint8Array; contentType: string } | undefined>;
  delete(key: string): Promise<void>;
}

/** Per process only; the default where no bucket or directory is configured (and in tests). */
export function createMemoryBlobStore(): BlobStore & { readonly keys: string[] } {
  const blobs = new Map<string, { bytes: Uint8Array; contentType: string }>();
  return {
    get keys() {
      return [...blobs.keys()];
    },
    async put(key, bytes, contentType) {
      blobs.set(key, { bytes: bytes.slice(), contentType });
    },
    async get(key) {
      const blob = blobs.get(key);
      // A copy, as the file and R2 stores hand out: the caller may change what it gets.
      return blob && { bytes: blob.bytes.slice(), contentType: blob.contentType };
    },
    async delete(key) {
      blobs.delete(key);
    },
  };
}

/** The subset of the Workers R2 binding this store uses. */
export interface R2BucketLike {
  put(key: string, value: Uint8Array, options?: { httpMetadata?: { contentType?: string } }): Promise<unknown>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer>; httpMetadata?: { contentType?: string } } | null>;
  delete(key: string): Promise<void>;
}

export function createR2BlobStore(bucket: R2BucketLike): BlobStore {
  return {
    async put(key, bytes, contentType) {
      await bucket.put(key, bytes, { httpMetadata: { contentType } });
    },
    async get(key) {
      const object = await bucket.get(key);
      if (!object) return undefined;
      return { bytes: new Uint8Array(await object.arrayBuffer()), contentType: object.httpMetadata?.contentType ?? "application/octet-stream" };
    },
    async delete(key) {
      await bucket.delete(key);
    },
  };
}
