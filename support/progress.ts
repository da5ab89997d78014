/**
 * A progress line on a stream, only when it is a terminal: one line rewritten in place, cleared when done.
 * Used by the harness (fixture n of N) and `pko-guard check` (reading, evaluating) on long runs; CI logs and
 * pipes get nothing.
 */
export interface Progress {
    show(text: string): void;
    done(): void;
}

export function progressLine(stream: NodeJS.WriteStream | undefined): Progress {
    if (!stream?.isTTY) return { show: () => undefined, done: () => undefined };
    let shown = false;
    return {
        show: (text) => {
            const width = stream.columns || 80;
            // Control characters in names never reach the terminal.
            const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
            stream.write(`\r\u001b[K${clean.slice(0, width - 1)}`);
            shown = true;
        },
        done: () => {
            if (shown) stream.write("\r\u001b[K");
            shown = false;
        },
    };
}
