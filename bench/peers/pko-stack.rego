# Bench-only peer of pko-guard's four core Stack rules, for conftest (run with --combine so that the
# cluster-admin rule can join bindings to the Stacks whose service account they name). Written for the
# shapes bench/peers/manifests.ts generates; pko-guard's own rules cover more (unknown values, workspace
# pod env, URLs with credentials, typed wrappers). Each finding is "rule|Kind/namespace/name".
package main

import rego.v1

docs contains d if {
	some f in input
	is_array(f.contents)
	some d in f.contents
	is_object(d)
}

docs contains d if {
	some f in input
	is_object(f.contents)
	d := f.contents
}

stacks contains s if {
	some s in docs
	s.kind == "Stack"
	s.apiVersion in {"pulumi.com/v1", "pulumi.com/v1alpha1"}
}

id(o) := sprintf("%s/%s/%s", [o.kind, object.get(o.metadata, "namespace", ""), o.metadata.name])

known_credentials := {
	"PULUMI_ACCESS_TOKEN", "PULUMI_CONFIG_PASSPHRASE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "ARM_CLIENT_SECRET", "GOOGLE_CREDENTIALS", "GITHUB_TOKEN",
}

credential_name(n) if n in known_credentials

credential_name(n) if regex.match(`(^|_)TOKEN$|(^|_)SECRET|(^|_)PASSWORD$|(^|_)PASSWD$|(^|_)KEY$|PASSPHRASE|(^|_)CREDENTIALS?($|_)|(^|_)API_?KEY($|_)|PRIVATE_?KEY`, n)

production(s) if regex.match(`(^|/)(prod|production|prd)([-_.][^/]*)?$`, s.spec.stack)

production(s) if {
	some k in ["env", "environment"]
	s.metadata.labels[k] in {"prod", "production"}
}

secret_ref_ok(ref) if {
	ref.type == "Secret"
	count(object.get(ref, ["secret", "name"], "")) > 0
	count(object.get(ref, ["secret", "key"], "")) > 0
}

deny contains sprintf("pko-stack-credentials-from-secrets|%s", [id(s)]) if {
	some s in stacks
	some name, ref in object.get(s.spec, "envRefs", {})
	credential_name(name)
	not secret_ref_ok(ref)
}

deny contains sprintf("pko-stack-credentials-from-secrets|%s", [id(s)]) if {
	some s in stacks
	count(object.get(s.spec, "secrets", {})) > 0
}

deny contains sprintf("pko-stack-credentials-from-secrets|%s", [id(s)]) if {
	some s in stacks
	some name, _ in object.get(s.spec, "envs", {})
	credential_name(name)
}

deny contains sprintf("pko-stack-destroy-on-finalize-nonprod|%s", [id(s)]) if {
	some s in stacks
	object.get(s.spec, "destroyOnFinalize", false) in {true, "true"}
	production(s)
}

unpinned(s) if count(object.get(s.spec, "branch", "")) > 0

unpinned(s) if not regex.match(`^[0-9a-fA-F]{40}$`, object.get(s.spec, "commit", ""))

deny contains sprintf("pko-stack-prod-pinned-commit|%s", [id(s)]) if {
	some s in stacks
	production(s)
	unpinned(s)
}

# The account a Stack's workspace runs as: the workspace template's, else spec.serviceAccountName, else default.
stack_account(s) := a if {
	a := s.spec.workspaceTemplate.spec.serviceAccountName
	count(a) > 0
} else := a if {
	a := s.spec.serviceAccountName
	count(a) > 0
} else := "default"

stack_accounts contains [object.get(s.metadata, "namespace", "default"), stack_account(s)] if some s in stacks

deny contains sprintf("pko-stack-no-cluster-admin|%s", [id(b)]) if {
	some b in docs
	b.kind in {"ClusterRoleBinding", "RoleBinding"}
	b.roleRef.kind == "ClusterRole"
	b.roleRef.name == "cluster-admin"
	some subject in b.subjects
	subject.kind == "ServiceAccount"
	[object.get(subject, "namespace", object.get(b.metadata, "namespace", "")), subject.name] in stack_accounts
}
