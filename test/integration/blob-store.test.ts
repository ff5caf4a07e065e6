import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { blobDirectory, createFileBlobStore } from "../../src/node/file-blob-store";
import { createMemoryBlobStore } from "../../src/services/kb/blob-store";
import { blobStoreContract } from "../support/blob-store-contract";

const dataDir = await mkdtemp(join(tmpdir(), "blob-store-test-"));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

blobStoreContract("memory", () => createMemoryBlobStore());
// The Node server's default: DATA_DIR/blobs, created on the first write.
blobStoreContract("files under DATA_DIR", () => createFileBlobStore(blobDirectory(dataDir)));

describe("the file blob store", () => {
  it("refuses a key that would leave its directory", async () => {
    const store = createFileBlobStore(blobDirectory(dataDir));
    await expect(store.put("../outside", new Uint8Array([1]), "text/plain")).rejects.toThrow(/escapes the store/);
    await expect(store.get("kb-assets/../../outside")).rejects.toThrow(/escapes the store/);
    expect(await readdir(dataDir)).not.toContain("outside");
  });

  it("leaves only the blob and its content type behind a write (no temporary files)", async () => {
    const root = await mkdtemp(join(tmpdir(), "blob-store-files-"));
    try {
      const store = createFileBlobStore(root);
      await Promise.all([1, 2, 3].map((n) => store.put("kb-assets/same", new Uint8Array([n]), "text/plain")));
      expect((await readdir(join(root, "kb-assets"))).sort()).toEqual(["same", "same.type"]);
      expect([1, 2, 3]).toContain((await store.get("kb-assets/same"))?.bytes[0]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
