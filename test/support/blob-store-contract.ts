import { describe, expect, it } from "vitest";
import type { BlobStore } from "../../src/services/kb/blob-store";

/**
 * What every BlobStore adapter promises, run against each of them: memory and files on Node
 * (test/integration/blob-store.test.ts), R2 inside workerd (test/workers/blob-store.test.ts).
 * Web APIs only, so the same cases run in both pools.
 */
export function blobStoreContract(name: string, open: () => BlobStore): void {
  describe(`BlobStore contract: ${name}`, () => {
    // Fresh keys per case: the stores may outlive a test (files, the R2 simulation).
    const newKey = () => `kb-assets/contract-${crypto.randomUUID()}`;

    it("answers undefined for a key never written", async () => {
      expect(await open().get(newKey())).toBeUndefined();
    });

    it("returns the bytes and content type it was given, every byte value intact", async () => {
      const store = open();
      const key = newKey();
      const bytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
      await store.put(key, bytes, "application/pdf");
      const blob = await store.get(key);
      expect(blob?.contentType).toBe("application/pdf");
      expect(blob && [...blob.bytes]).toEqual([...bytes]);
    });

    it("keeps an empty blob as empty, not as missing", async () => {
      const store = open();
      const key = newKey();
      await store.put(key, new Uint8Array(0), "text/plain");
      const blob = await store.get(key);
      expect(blob).toBeDefined();
      expect(blob?.bytes.byteLength).toBe(0);
      expect(blob?.contentType).toBe("text/plain");
    });

    it("replaces a blob written again under the same key, content type included", async () => {
      const store = open();
      const key = newKey();
      await store.put(key, new TextEncoder().encode("first version, longer than the second"), "text/plain");
      await store.put(key, new TextEncoder().encode("second"), "text/markdown");
      const blob = await store.get(key);
      expect(blob && new TextDecoder().decode(blob.bytes)).toBe("second");
      expect(blob?.contentType).toBe("text/markdown");
    });

    it("keeps its own copy: changing the caller's bytes after put or after get changes nothing stored", async () => {
      const store = open();
      const key = newKey();
      const bytes = new TextEncoder().encode("original");
      await store.put(key, bytes, "text/plain");
      bytes.fill(0);
      const first = await store.get(key);
      first?.bytes.fill(0);
      const second = await store.get(key);
      expect(second && new TextDecoder().decode(second.bytes)).toBe("original");
    });

    it("keeps blobs under different keys apart", async () => {
      const store = open();
      const [a, b] = [newKey(), newKey()];
      await store.put(a, new TextEncoder().encode("a"), "text/plain");
      await store.put(b, new TextEncoder().encode("b"), "text/html");
      const [blobA, blobB] = [await store.get(a), await store.get(b)];
      expect(blobA && new TextDecoder().decode(blobA.bytes)).toBe("a");
      expect(blobB && new TextDecoder().decode(blobB.bytes)).toBe("b");
      expect(blobB?.contentType).toBe("text/html");
    });

    it("forgets a deleted blob, leaves the others, and deleting a missing key is not an error", async () => {
      const store = open();
      const [gone, kept] = [newKey(), newKey()];
      await store.put(gone, new TextEncoder().encode("x"), "text/plain");
      await store.put(kept, new TextEncoder().encode("y"), "text/plain");
      await store.delete(gone);
      expect(await store.get(gone)).toBeUndefined();
      expect(await store.get(kept)).toBeDefined();
      await expect(store.delete(gone)).resolves.toBeUndefined();
      await expect(store.delete(newKey())).resolves.toBeUndefined();
    });
  });
}
