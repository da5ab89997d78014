/**
 * How pack-wide settings reach the rules, one request at a time. CrossGuard gives each policy only its own
 * config, so the settings policy (listed first, so the analyzer calls it first in every request) publishes
 * its settings for the request, and the rules of that request read them. The analyzer interleaves
 * concurrent requests, so a request is known by what it is about: a resource's URN, or a program's key.
 *
 * Nothing published under one configuration survives another: publishing with a configuration other than
 * the current one resets everything first (an analyzer reconfigured between fixtures, an in-process
 * evaluation with another pack config). In-process evaluators reset before and after each evaluation.
 */
export class RequestSettings<S> {
    private readonly byRequest = new Map<string, S>();
    private configuration: string | undefined;

    constructor(private readonly max = 200000) {}

    /** Publishes the settings of a request, read from `configuration` (its identity, e.g. the config as JSON). */
    publish(request: string, configuration: string, settings: S): void {
        if (configuration !== this.configuration) this.reset();
        this.configuration = configuration;
        this.byRequest.delete(request);
        if (this.byRequest.size >= this.max) this.byRequest.delete(this.byRequest.keys().next().value as string);
        this.byRequest.set(request, settings);
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
}
