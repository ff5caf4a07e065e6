const decoder = new TextDecoder();
const alreadyRead = () => new TypeError("Body is unusable: Body has already been read");

/**
 * A `Response` whose body the Node fetch has already read whole (every inference answer that is not
 * a stream). Its readers work on the bytes directly. A `Response` built over bytes wraps them in a
 * web stream and reads them back through it; under the AI bench's load that was about 7 % of the
 * API's CPU (the undici `Response` behind the adapter's lightweight one, its stream, and `json()`
 * draining it), for bodies of a few hundred bytes that are parsed once.
 *
 * Behaves as a `Response` for its readers: each body reader works once (a second read rejects
 * with a TypeError, as `fetch`'s does), `bodyUsed` says so, `clone()` copies, and `body` gives
 * the bytes as a stream for a caller that wants one (reading it counts as reading the body). The
 * status is its own and the headers are built on first use: the base `Response` is built bare,
 * because filling its `Headers` was a third of the cost, and the inference clients read an
 * answer's headers only when it failed.
 */
export class BufferedResponse extends Response {
  readonly #bytes: Uint8Array<ArrayBuffer>;
  readonly #status: number;
  readonly #statusText: string;
  readonly #headerPairs: [string, string][];
  #headers: Headers | undefined;
  #stream: ReadableStream<Uint8Array<ArrayBuffer>> | undefined;
  #used = false;

  constructor(bytes: Uint8Array<ArrayBuffer>, init: { status: number; statusText?: string; headers: [string, string][] }) {
    super(null);
    this.#bytes = bytes;
    this.#status = init.status;
    this.#statusText = init.statusText ?? "";
    this.#headerPairs = init.headers;
  }

  override get status(): number {
    return this.#status;
  }

  override get statusText(): string {
    return this.#statusText;
  }

  override get ok(): boolean {
    return this.#status >= 200 && this.#status < 300;
  }

  override get headers(): Headers {
    this.#headers ??= new Headers(this.#headerPairs);
    return this.#headers;
  }

  override get bodyUsed(): boolean {
    return this.#used;
  }

  /** The bytes as a stream, the same one on every access; reading it counts as reading the body. */
  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> {
    this.#stream ??= new ReadableStream<Uint8Array<ArrayBuffer>>(
      {
        pull: (controller) => {
          if (this.#used) return controller.error(alreadyRead());
          this.#used = true;
          controller.enqueue(this.#bytes);
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    return this.#stream;
  }

  override json(): Promise<any> {
    return this.#read((bytes) => JSON.parse(decoder.decode(bytes)));
  }

  override text(): Promise<string> {
    return this.#read((bytes) => decoder.decode(bytes));
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read((bytes) => bytes.slice().buffer);
  }

  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#read((bytes) => bytes.slice());
  }

  override blob(): Promise<Blob> {
    return this.#read((bytes) => new Blob([bytes], { type: this.headers.get("content-type") ?? "" }));
  }

  override clone(): BufferedResponse {
    if (this.#used || this.#stream?.locked) throw new TypeError("Response.clone: Body has already been consumed.");
    return new BufferedResponse(this.#bytes.slice(), { status: this.#status, statusText: this.#statusText, headers: [...this.headers] });
  }

  #take(): Uint8Array<ArrayBuffer> {
    if (this.#used || this.#stream?.locked) throw alreadyRead();
    this.#used = true;
    return this.#bytes;
  }

  #read<T>(parse: (bytes: Uint8Array<ArrayBuffer>) => T): Promise<T> {
    try {
      return Promise.resolve(parse(this.#take()));
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
