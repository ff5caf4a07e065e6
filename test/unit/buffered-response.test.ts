import { describe, expect, it } from "vitest";
import { BufferedResponse } from "../../src/node/buffered-response";

const bytesOf = (text: string) => new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
const answer = (text = '{"a":"é"}') => new BufferedResponse(bytesOf(text), { status: 201, statusText: "Created", headers: [["content-type", "application/json"]] });

describe("a response whose body was read whole", () => {
  it("is a Response with the status and headers it was given", () => {
    const res = answer();
    expect(res).toBeInstanceOf(Response);
    expect([res.status, res.statusText, res.ok, res.headers.get("content-type"), res.bodyUsed]).toEqual([201, "Created", true, "application/json", false]);
  });

  it("reads as JSON, text, bytes, an ArrayBuffer or a Blob", async () => {
    expect(await answer().json()).toEqual({ a: "é" });
    expect(await answer().text()).toBe('{"a":"é"}');
    expect(new TextDecoder().decode(await answer().bytes())).toBe('{"a":"é"}');
    expect(new TextDecoder().decode(await answer().arrayBuffer())).toBe('{"a":"é"}');
    const blob = await answer().blob();
    expect([blob.type, await blob.text()]).toEqual(["application/json", '{"a":"é"}']);
  });

  it("gives its body as one stream, read once", async () => {
    const res = answer();
    const stream = res.body;
    expect(res.body).toBe(stream);
    expect(res.bodyUsed).toBe(false);
    expect(await new Response(stream).text()).toBe('{"a":"é"}');
    expect(res.bodyUsed).toBe(true);
    await expect(res.json()).rejects.toBeInstanceOf(TypeError);

    const taken = answer();
    const untouched = taken.body;
    expect(await taken.json()).toEqual({ a: "é" });
    await expect(new Response(untouched).text()).rejects.toBeInstanceOf(TypeError);
  });

  it("is read once, as fetch's answers are, and rejects JSON that does not parse", async () => {
    const res = answer();
    await res.text();
    expect(res.bodyUsed).toBe(true);
    await expect(res.json()).rejects.toBeInstanceOf(TypeError);
    await expect(answer("{not json").json()).rejects.toBeInstanceOf(SyntaxError);
  });

  it("clones into an independent copy until it has been read", async () => {
    const res = answer();
    const copy = res.clone();
    expect(await res.json()).toEqual({ a: "é" });
    expect([copy.status, copy.headers.get("content-type"), await copy.text()]).toEqual([201, "application/json", '{"a":"é"}']);
    expect(() => res.clone()).toThrow(TypeError);
  });
});
