/**
 * Reviews that could interact, one at a time: a review holds the keys of what it reads and changes from
 * before it reads the cluster until its decision is recorded, so the second of two interacting reviews reads
 * the first's object. Grants are first come, first served, so neither small reviews nor an `ALL` one starve.
 */

/** Every key: conflicts with every review. */
export const ALL = "*";

interface Waiter {
    keys: Set<string>;
    grant: () => void;
}

function conflicts(a: Set<string>, b: Set<string>): boolean {
    if (a.has(ALL) || b.has(ALL)) return true;
    for (const k of a) if (b.has(k)) return true;
    return false;
}

export class ReviewLocks {
    private readonly held = new Map<number, Set<string>>();
    private readonly queue: (Waiter & { id: number })[] = [];
    private next = 0;

    /** Reviews holding keys now, and waiting for them. */
    counts(): { holding: number; waiting: number } {
        return { holding: this.held.size, waiting: this.queue.length };
    }

    /**
     * Resolves with the release once no earlier holder or waiter shares a key with `keys`; rejects when `signal`
     * aborts first (nothing is held then).
     */
    acquire(keys: Iterable<string>, signal?: AbortSignal): Promise<() => void> {
        const id = this.next++;
        const wanted = new Set(keys);
        return new Promise((resolve, reject) => {
            const waiter = {
                id,
                keys: wanted,
                grant: () => {
                    signal?.removeEventListener("abort", onAbort);
                    this.held.set(id, wanted);
                    let released = false;
                    resolve(() => {
                        if (released) return;
                        released = true;
                        this.held.delete(id);
                        this.pump();
                    });
                },
            };
            const onAbort = () => {
                const i = this.queue.indexOf(waiter);
                if (i < 0) return;
                this.queue.splice(i, 1);
                reject(new Error("reviews of the same namespaces kept this one waiting until its deadline"));
                this.pump();
            };
            if (signal?.aborted) return reject(new Error("the review's deadline passed before it started"));
            signal?.addEventListener("abort", onAbort, { once: true });
            this.queue.push(waiter);
            this.pump();
        });
    }

    /** Grants, in order, every waiter that shares no key with a holder or an earlier waiter. */
    private pump(): void {
        const blocked: Set<string>[] = [...this.held.values()];
        for (let i = 0; i < this.queue.length;) {
            const w = this.queue[i];
            if (blocked.some((b) => conflicts(b, w.keys))) {
                blocked.push(w.keys);
                i++;
                continue;
            }
            this.queue.splice(i, 1);
            blocked.push(w.keys);
            w.grant();
        }
    }
}
