import * as assert from "assert";
import { rule as policy } from "../../../policies/aws-s3-no-public-acl";
import { UNKNOWN_WIRE, runResourcePolicy, secret, ExpectedFinding, assertFindings } from "../../support/helpers";

const run = (type: string, props: unknown) => runResourcePolicy(policy, { type, name: "b", props });
/** The one finding an input should produce. */
const one = (message: RegExp): ExpectedFinding[] => [
    { policy: policy.name, level: "mandatory", resource: "b", message },
];
const check = (...a: Parameters<typeof run>) => run(...a).map((r) => r.message);
const BUCKET = "aws:s3/bucket:Bucket";
const ACL = "aws:s3/bucketAcl:BucketAcl";
const ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers";

describe("aws-s3-no-public-acl", () => {
    it("passes private buckets and ACLs", () => {
        assert.deepStrictEqual(check(BUCKET, {}), []);
        assert.deepStrictEqual(check(BUCKET, { acl: "private" }), []);
        assert.deepStrictEqual(check(ACL, { bucket: "x", acl: "bucket-owner-full-control" }), []);
    });

    it("flags public canned ACLs on buckets, v2 buckets, ACLs and objects", () => {
        for (const type of [
            BUCKET,
            "aws:s3/bucketV2:BucketV2",
            ACL,
            "aws:s3/bucketAclV2:BucketAclV2",
            "aws:s3/bucketObjectv2:BucketObjectv2",
        ]) {
            for (const acl of ["public-read", "public-read-write", "authenticated-read"]) {
                assert.strictEqual(check(type, { acl }).length, 1, `${type} ${acl}`);
            }
        }
    });

    it("flags AllUsers and AuthenticatedUsers grants", () => {
        assert.strictEqual(
            check(BUCKET, { grants: [{ type: "Group", uri: ALL_USERS, permissions: ["READ"] }] }).length,
            1,
        );
        const grants = [
            { grantee: { type: "Group", uri: ALL_USERS }, permission: "READ" },
            {
                grantee: { type: "Group", uri: "http://acs.amazonaws.com/groups/global/AuthenticatedUsers" },
                permission: "WRITE",
            },
            { grantee: { type: "CanonicalUser", id: "abc" }, permission: "FULL_CONTROL" },
        ];
        assert.strictEqual(check(ACL, { accessControlPolicy: { grants } }).length, 2);
    });

    it("fails closed on unknown ACLs and grants; reads secret-wrapped values", () => {
        assertFindings(run(BUCKET, { acl: UNKNOWN_WIRE }), one(/unknown during preview/));
        assert.strictEqual(check(ACL, { accessControlPolicy: { grants: UNKNOWN_WIRE } }).length, 1);
        assert.strictEqual(check(BUCKET, { acl: secret("public-read") }).length, 1);
    });

    it("ignores other resource types", () => {
        assert.deepStrictEqual(check("aws:s3/bucketPolicy:BucketPolicy", { acl: "public-read" }), []);
    });
});
