/**
 * Leases as an API server keeps them, for claims (cluster/claims.ts) in unit specs: uid and resourceVersion set on
 * every write, 409 (LeaseConflict) on a create of a name that exists or an update at a stale resourceVersion,
 * delete only at the uid and resourceVersion given; each call answers a turn later.
 */
import { LeaseConflict, LeaseRecord, LeaseStore, LeaseWrite } from "../../cluster/claims";

export class FakeLeases implements LeaseStore {
    readonly leases = new Map<string, LeaseRecord & { all: boolean; sharedOf?: string }>();
    private rv = 0;
    private uid = 0;
    /** Every call, by verb. */
    readonly calls: Record<string, number> = {
        create: 0,
        get: 0,
        takeOver: 0,
        remove: 0,
        keyLeases: 0,
        sharedLeases: 0,
    };
    /** Set: every call but remove fails with it (an API server refusing). */
    fail?: Error;

    private write(w: LeaseWrite, uid: string): LeaseRecord {
        const r = {
            name: w.name,
            uid,
            resourceVersion: String(++this.rv),
            holder: w.holder,
            renewMs: w.renewMs,
            durationS: w.durationS,
            all: w.all,
            sharedOf: w.sharedOf,
        };
        this.leases.set(w.name, r);
        return { ...r };
    }

    /** Set: every call but remove never answers (an API server that hangs). */
    hang = false;

    private async turn(verb: string): Promise<void> {
        this.calls[verb]++;
        if (this.hang && verb !== "remove") await new Promise(() => undefined);
        await new Promise((r) => setImmediate(r));
        if (this.fail && verb !== "remove") throw this.fail;
    }

    async create(w: LeaseWrite): Promise<LeaseRecord> {
        await this.turn("create");
        if (this.leases.has(w.name)) throw new LeaseConflict("exists");
        return this.write(w, `uid-${++this.uid}`);
    }

    async get(name: string): Promise<LeaseRecord | undefined> {
        await this.turn("get");
        const r = this.leases.get(name);
        return r ? { ...r } : undefined;
    }

    async takeOver(old: LeaseRecord, w: LeaseWrite): Promise<LeaseRecord> {
        await this.turn("takeOver");
        const now = this.leases.get(w.name);
        if (!now || now.resourceVersion !== old.resourceVersion) throw new LeaseConflict("changed");
        return this.write(w, now.uid);
    }

    async remove(r: LeaseRecord): Promise<void> {
        await this.turn("remove");
        const now = this.leases.get(r.name);
        if (now && now.uid === r.uid && now.resourceVersion === r.resourceVersion) this.leases.delete(r.name);
    }

    async keyLeases(): Promise<LeaseRecord[]> {
        await this.turn("keyLeases");
        return [...this.leases.values()].filter((r) => !r.all).map((r) => ({ ...r }));
    }

    async sharedLeases(name: string): Promise<LeaseRecord[]> {
        await this.turn("sharedLeases");
        return [...this.leases.values()].filter((r) => r.sharedOf === name).map((r) => ({ ...r }));
    }
}

/**
 * Whether a promise has settled after 20 turns of one-millisecond timers (the claims poll every millisecond under
 * the fake): a claim still waiting after them is blocked, not slow.
 */
export async function settled(p: Promise<unknown>): Promise<boolean> {
    let done = false;
    p.then(
        () => (done = true),
        () => (done = true),
    );
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 1));
    return done;
}
