/**
 * How pack-wide settings reach the rules, one request at a time. CrossGuard gives each policy only its own
 * config, so the settings policy (placed first) publishes for each request and that request's rules read it.
 * Nothing is module-level: each built pack has its own channel. The analyzer interleaves requests, so a request
 * is keyed by URN or program key, and what is published lasts only until the event-loop turn ends (the SDK
 * runs a request's synchronous policies in the turn its gRPC call arrives) or another configuration publishes,
 * so a rule never sees an earlier request's settings; with none it fails closed.
 */
export class RequestSettings<S> {
    private readonly byRequest = new Map<string, S>();
    private configuration: string | undefined;
    /** Whether the end of this turn of the event loop is already set to forget what was published. */
    private expiring = false;

    constructor(private readonly max = 200000) {}

    /** Publishes the settings of a request, read from `configuration` (its identity, e.g. the config as JSON). */
    publish(request: string, configuration: string, settings: S): void {
        if (configuration !== this.configuration) this.reset();
        this.configuration = configuration;
        this.byRequest.delete(request);
        if (this.byRequest.size >= this.max) this.byRequest.delete(this.byRequest.keys().next().value as string);
        this.byRequest.set(request, settings);
        this.forgetAtEndOfTurn();
    }

    /** The settings published for a request; undefined when none were (the settings policy did not run). */
    read(request: string | undefined): S | undefined {
        return request === undefined ? undefined : this.byRequest.get(request);
    }

    /** Forgets one request, or everything (as a fresh analyzer process knows nothing). */
    reset(request?: string): void {
        if (request !== undefined) {
            this.byRequest.delete(request);
            return;
        }
        this.byRequest.clear();
        this.configuration = undefined;
    }

    /** One timer a turn, holding nothing alive (`unref`): the requests of this turn are over when it runs. */
    private forgetAtEndOfTurn(): void {
        if (this.expiring) return;
        this.expiring = true;
        setImmediate(() => {
            this.expiring = false;
            this.reset();
        }).unref();
    }
}
