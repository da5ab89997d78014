// Command flux-build builds a Flux Kustomization (kustomize.toolkit.fluxcd.io/v1) the way kustomize-controller
// builds it before applying, with Flux's own library (github.com/fluxcd/pkg/kustomize, the module the
// controller and `flux build kustomization` use):
//
//  1. the kustomization file of spec.path is found, or generated when the folder has none (every manifest
//     below it, a sub-folder holding a kustomization as one entry), and the Kustomization's targetNamespace,
//     namePrefix, nameSuffix, patches, images and components are written into it (Generator.WriteFile);
//  2. kustomize builds it on a file system confined to the source's root, remote bases refused (SecureBuild);
//  3. when spec.postBuild is set, each object's variables are substituted (SubstituteVariables: ConfigMaps and
//     Secrets of spec.postBuild.substituteFrom, then spec.postBuild.substitute, `${var:=default}`, objects
//     annotated or labelled `kustomize.toolkit.fluxcd.io/substitute: disabled` left alone).
//
// pko-guard check runs it (gitops/flux/build.ts) on its scratch copy of the repository. Input on stdin, one
// JSON object:
//
//	{"root": "<the source's root>", "path": "<the folder to build, inside root>",
//	 "kustomization": <the Flux Kustomization object>,
//	 "objects": [<ConfigMaps and Secrets substituteFrom may name, Secrets' data base64 as in the API>],
//	 "origins": true, "strict": true}
//
// {"semver": {"range": "<spec.ref.semver>", "tags": [<the repository's tags>]}} instead answers which tag a
// GitRepository's semver ref checks out, as fluxcd/pkg/git does: {"tag": "...", "tied": [<tags of that version>]}.
//
// {"untar": {"archive": "<file>", "into": "<folder>", "maxBytes": N}} instead extracts a Flux OCI artifact's layer as
// source-controller does (github.com/fluxcd/pkg/tar: confined to the folder, symlinks skipped, bounded).
//
// {"artifact": {"root": "<a source's tree>", "into": "<an empty folder>", "ignore": "<spec.ignore, if set>",
// "ignored": "<a file>", "skip": [".git", "node_modules"]}} instead writes the source's artifact as source-controller archives it (Storage.Archive
// with SourceIgnoreFilter, github.com/fluxcd/pkg/sourceignore): every `.sourceignore` below the root (each scoped
// to its folder) and then spec.ignore; when there is none, Flux's default excludes (VCS, CI, images and archives,
// .sops.yaml and the like); when there are some, only the VCS excludes and them; regular files and folders only.
// The files left out are listed, one root-relative path a line, in `ignored`; folders named in `skip` are not
// walked (a working tree's, not a checkout's). check builds Kustomizations and
// renders HelmRelease charts from that tree, as the controllers do from the artifact.
//
// `strict` fails the build on a variable without a default that no input sets, as kustomize-controller does by
// default since v1.9 (its StrictPostBuildSubstitutions feature gate).
// `origins` turns on kustomize's origin annotations (config.kubernetes.io/origin), which check reads to
// attribute each object to its file and then removes. The kustomization file is restored (or the generated
// one removed) before the command exits. Output on stdout: the objects as one YAML stream. On failure, one
// line on stderr and exit status 1; kustomize's and the substitution's errors are passed on, and check
// removes any quoted text from them before showing them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/kustomize"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

type request struct {
	Root          string           `json:"root"`
	Path          string           `json:"path"`
	Kustomization map[string]any   `json:"kustomization"`
	Objects       []map[string]any `json:"objects"`
	Origins       bool             `json:"origins"`
	Strict        bool             `json:"strict"`
	Artifact      *artifactRequest `json:"artifact"`
	Semver        *semverRequest   `json:"semver"`
	Untar         *untarRequest    `json:"untar"`
}

// maxInput bounds what is read: a Kustomization and the ConfigMaps and Secrets it may read.
const maxInput = 64 << 20

// memoryLimit bounds the process (a kustomization can build a lot).
const memoryLimit = 4 << 30

// repositoryObjects answers the substitution's reads of ConfigMaps and Secrets from the objects found in the
// repository, as the cluster would once they are applied; any other read is an error (none is made).
type repositoryObjects struct {
	client.Client
	objects map[string]map[string]any
}

func objectKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (r repositoryObjects) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	var kind string
	switch obj.(type) {
	case *corev1.ConfigMap:
		kind = "ConfigMap"
	case *corev1.Secret:
		kind = "Secret"
	default:
		return errors.New("only ConfigMaps and Secrets are read")
	}
	found, ok := r.objects[objectKey(kind, key.Namespace, key.Name)]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, key.Name)
	}
	data, err := json.Marshal(found)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, obj)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// restore puts the folder's kustomization back as it was: the original file's bytes, or no file.
func restore(kfile string, original []byte, existed bool) {
	if existed {
		_ = os.WriteFile(kfile, original, 0o644)
	} else {
		_ = os.Remove(kfile)
	}
}

// kustomizationFile is the file the generator writes in dir: the recognized one there, else the default name.
func kustomizationFile(dir string) string {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && !st.IsDir() {
			return filepath.Join(dir, name)
		}
	}
	return filepath.Join(dir, "kustomization.yaml")
}

func build(req request) ([]byte, error) {
	root, err := filepath.Abs(req.Root)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(req.Path)
	if err != nil {
		return nil, err
	}
	ks := unstructured.Unstructured{Object: req.Kustomization}
	kfile := kustomizationFile(dir)
	original, readErr := os.ReadFile(kfile)
	existed := readErr == nil
	defer restore(kfile, original, existed)
	if _, err := kustomize.NewGenerator(root, ks).WriteFile(dir); err != nil {
		return nil, fmt.Errorf("generating the kustomization: %w", err)
	}
	if req.Origins {
		if err := addOrigins(kfile); err != nil {
			return nil, err
		}
	}
	resources, err := kustomize.SecureBuild(root, dir, false)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	objects := map[string]map[string]any{}
	for _, o := range req.Objects {
		u := unstructured.Unstructured{Object: o}
		objects[objectKey(u.GetKind(), u.GetNamespace(), u.GetName())] = o
	}
	reader := repositoryObjects{objects: objects}
	_, postBuild, _ := unstructured.NestedMap(req.Kustomization, "spec", "postBuild")
	strategy, _, _ := unstructured.NestedString(req.Kustomization, "spec", "postBuild", "substituteStrategy")
	for _, res := range resources.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, errors.New("an object has no apiVersion, kind or name")
		}
		if !postBuild {
			continue
		}
		out, err := kustomize.SubstituteVariables(context.Background(), reader, ks, res,
			kustomize.SubstituteWithStrict(req.Strict), kustomize.SubstituteWithAlways(strategy == "Always"))
		if err != nil {
			return nil, fmt.Errorf("post build failed for %s %s: %w", res.GetKind(), res.GetName(), err)
		}
		if out != nil {
			if _, err := resources.Replace(res); err != nil {
				return nil, err
			}
		}
	}
	return resources.AsYaml()
}

// addOrigins turns on origin annotations in the kustomization the generator wrote.
func addOrigins(kfile string) error {
	fs := filesys.MakeFsOnDisk()
	data, err := fs.ReadFile(kfile)
	if err != nil {
		return err
	}
	var k kustypes.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("reading the generated kustomization: %w", err)
	}
	for _, m := range k.BuildMetadata {
		if m == kustypes.OriginAnnotations {
			return nil
		}
	}
	k.BuildMetadata = append(k.BuildMetadata, kustypes.OriginAnnotations)
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return fs.WriteFile(kfile, out)
}

func main() {
	limitMemory(memoryLimit)
	in, err := io.ReadAll(io.LimitReader(os.Stdin, maxInput+1))
	if err != nil || len(in) > maxInput {
		fail("cannot read the input (at most 64 MiB)")
	}
	var req request
	if err := json.Unmarshal(in, &req); err != nil {
		fail("the input is not a JSON request")
	}
	if req.Artifact != nil {
		if err := artifact(*req.Artifact); err != nil {
			fail("%s", err.Error())
		}
		return
	}
	if req.Untar != nil {
		if err := untar(*req.Untar); err != nil {
			fail("%s", err.Error())
		}
		return
	}
	if req.Semver != nil {
		out, err := pickSemver(*req.Semver)
		if err != nil {
			fail("%s", err.Error())
		}
		_, _ = os.Stdout.Write(out)
		return
	}
	if req.Root == "" || req.Path == "" || req.Kustomization == nil {
		fail("the request needs root, path and kustomization")
	}
	out, err := build(req)
	if err != nil {
		fail("%s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	_, _ = os.Stdout.Write(out)
}
