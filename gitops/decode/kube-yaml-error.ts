/** A decoding error: the reason (never the document's text) and the offset in the stream it points at. */
export class KubeYamlError extends Error {
    constructor(
        readonly reason: string,
        readonly offset: number,
    ) {
        super(reason);
    }
}
