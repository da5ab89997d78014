/**
 * How pack-wide settings reach the rules, one request at a time. CrossGuard gives each policy only its own
 * config, so a pack's settings policy, which the pack places first (policies/index.ts `buildPolicies`),
 * publishes its settings for each request it is called in, and the rules of that request read them. One
 * `RequestSettings` belongs to one built pack: the pack builder hands its writing side to the settings policy
 * and its reading side to every rule (production.ts `productionChannel`); nothing is module-level, so two
 * packs (the analyzer's, each in-process evaluation's) never see each other's settings.
 *
 * The analyzer interleaves concurrent requests, so a request is known by what it is about: a resource's URN,
 * or a program's key. What is published lasts for one request only:
 * - until the current turn of the event loop ends: the SDK runs a request's policies, which are synchronous,
 *   in the turn its gRPC call arrives in, and a later request (another call) never sees them;
 * - until settings are published under another configuration (an analyzer reconfigured between fixtures, a
 *   test that runs several configurations in one turn): that resets everything first.
 * So a rule reads only what its own request's settings policy published, or nothing: a settings policy
 * disabled in a later request leaves its rules with no settings (they then fail closed), never with the
 * settings of an earlier request.
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
