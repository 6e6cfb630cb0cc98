# Two commands set everything up on a fresh machine: `make demo` and `make test`.
# `make check` is the quick loop while editing: lint, types and the unit tests.
PYTHON ?= python3.11
VENV := .venv
SAMVENV := .venv-sam
CHECKOVVENV := .venv-checkov
PY := $(VENV)/bin/python
SAM := $(SAMVENV)/bin/sam
export SAM_CLI_TELEMETRY := 0
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# pytest workers (pytest-xdist) for `make test`: auto is one per core
WORKERS ?= auto
# hypothesis examples per safety property: 500 in `make test`, 10,000 in `make props`
PROPS ?= 10000

.PHONY: demo test check props unit integration pytest lint typecheck sam-validate sam-build smoke checkov bench clean venv sam-venv deploy deploy-org docs docs-check

# The development environment: the demo's packages plus the test, lint and docs tools.
$(VENV)/.ready: requirements-dev.txt requirements-docs.txt requirements-demo.txt layers/reaper/requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11) on PATH"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements-dev.txt -r requirements-docs.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	@touch $(VENV)/.demo-ready $@

# What `make demo` needs and no more (requirements-demo.txt: the layer's runtime, moto's server):
# the same .venv, so `.venv/bin/reaper` is there after either; `make test` adds the rest to it.
$(VENV)/.demo-ready: requirements-demo.txt layers/reaper/requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (Python 3.11) on PATH"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements-demo.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	@touch $@

$(SAMVENV)/.ready: requirements-sam.txt
	$(PYTHON) -m venv $(SAMVENV)
	$(SAMVENV)/bin/pip install -q --upgrade pip
	$(SAMVENV)/bin/pip install -q -r requirements-sam.txt
	@touch $@

$(CHECKOVVENV)/.ready: requirements-checkov.txt
	$(PYTHON) -m venv $(CHECKOVVENV)
	$(CHECKOVVENV)/bin/pip install -q --upgrade pip
	$(CHECKOVVENV)/bin/pip install -q -r requirements-checkov.txt
	@touch $@

# Both environments: the project's (.venv/bin/reaper) and the SAM CLI's (.venv-sam/bin/sam), so the
# README's deploy steps work as written after `make venv`.
venv: $(VENV)/.ready $(SAMVENV)/.ready

sam-venv: $(SAMVENV)/.ready

# Credentials first (sts get-caller-identity: without them one line and exit 3, nothing built), then three
# questions (stack name, region, Slack) saved to samconfig.toml's [default.deploy.parameters], the rest from
# samconfig.toml (Mode=dry-run), then `sam build` and a non-guided `sam deploy` (scripts/deploy.py, docs/deploy.md).
deploy: $(SAMVENV)/.ready
	$(SAMVENV)/bin/python scripts/deploy.py --sam $(SAM)

# The manual: regenerate the CLI and parameters references, then build the site into .site/ with
# --strict (a broken link or anchor fails).
docs: $(VENV)/.ready
	$(PY) scripts/gen_docs.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

# In `make test`: the generated references must already be fresh (never rewritten while tests read them);
# then the built site as a browser sees it (scripts/site_check.py): its search index, search finding pages
# in headless Chromium, and screenshots of the home page and a kind page in .site/_screenshots/. Without
# Chromium (Debian's `chromium`) that browser step says SKIPPED and what to install.
docs-check: $(VENV)/.ready
	$(PY) scripts/gen_docs.py --check
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet
	$(PY) scripts/site_check.py

# Every account and region of an organisation (docs/deploy-organisation.md), from the management account or a
# delegated administrator, after org/central.yaml is deployed in the central account. ORG_BUCKET is a prefix:
# one bucket ORG_BUCKET-<region> per region (Lambda reads code only from its own region), readable by the
# organisation. StackSets with service-managed permissions take no macros, so the template is expanded first.
# ORG_CALL_AS: SELF from the management account (CloudFormation's default), DELEGATED_ADMIN from a delegated
# administrator of StackSets; passed as --call-as to every StackSet call (docs/aws-assumptions.md SS1-SS3).
# Anything else is refused before anything runs (exit 2), also under `make -n`.
STACKSET ?= mlreaper
ORG_CALL_AS ?= SELF
ORG_FIRST = $(firstword $(ORG_REGIONS))
ifneq ($(filter deploy-org,$(MAKECMDGOALS)),)
ifneq ($(ORG_CALL_AS),SELF)
ifneq ($(ORG_CALL_AS),DELEGATED_ADMIN)
$(error ORG_CALL_AS must be SELF (the management account) or DELEGATED_ADMIN (a delegated administrator), not "$(ORG_CALL_AS)" (docs/deploy-organisation.md))
endif
endif
endif
deploy-org: $(SAMVENV)/.ready
	@test -n "$(ORG_BUCKET)" -a -n "$(ORG_REGIONS)" -a -n "$(ORG_OUS)" -a -n "$(CENTRAL_BUS_ARN)" -a -n "$(CENTRAL_ACCOUNT)" \
	  || { echo "set ORG_BUCKET, ORG_REGIONS, ORG_OUS, CENTRAL_BUS_ARN and CENTRAL_ACCOUNT (docs/deploy-organisation.md)"; exit 2; }
	$(SAM) build --parallel
	$(SAM) package --s3-bucket $(ORG_BUCKET)-$(ORG_FIRST) --region $(ORG_FIRST) --output-template-file .aws-sam/packaged.yaml
	$(SAMVENV)/bin/python scripts/stackset_template.py .aws-sam/packaged.yaml --regional-buckets $(ORG_BUCKET) > .aws-sam/stackset.json
	for r in $(wordlist 2,99,$(ORG_REGIONS)); do \
	  aws s3 sync s3://$(ORG_BUCKET)-$(ORG_FIRST) s3://$(ORG_BUCKET)-$$r --source-region $(ORG_FIRST) --region $$r --exclude "$(STACKSET)/*"; done
	aws s3 cp .aws-sam/stackset.json s3://$(ORG_BUCKET)-$(ORG_FIRST)/$(STACKSET)/stackset.json --region $(ORG_FIRST)
	aws cloudformation create-stack-set --stack-set-name $(STACKSET) --region $(ORG_FIRST) --call-as $(ORG_CALL_AS) \
	  --permission-model SERVICE_MANAGED --auto-deployment Enabled=true,RetainStacksOnAccountRemoval=false \
	  --capabilities CAPABILITY_IAM CAPABILITY_NAMED_IAM \
	  --template-url https://$(ORG_BUCKET)-$(ORG_FIRST).s3.$(ORG_FIRST).amazonaws.com/$(STACKSET)/stackset.json \
	  --parameters ParameterKey=CentralEventBusArn,ParameterValue=$(CENTRAL_BUS_ARN) ParameterKey=CentralAccountId,ParameterValue=$(CENTRAL_ACCOUNT)
	aws cloudformation create-stack-instances --stack-set-name $(STACKSET) --region $(ORG_FIRST) --call-as $(ORG_CALL_AS) \
	  --deployment-targets OrganizationalUnitIds=$(ORG_OUS) --regions $(ORG_REGIONS)

demo: $(VENV)/.demo-ready
	$(VENV)/bin/reaper demo

lint: $(VENV)/.ready
	$(VENV)/bin/ruff check layers functions devkit tests bench scripts agent
	$(VENV)/bin/ruff format --check layers functions devkit tests bench scripts agent

# mypy --strict over the layer, every function's handler and the scripts (org/ holds only templates). Each
# function is an `app.py` in its own folder: --explicit-package-bases names them functions.<name>.app (one
# module each, all checked in one run), and MYPYPATH finds `reaper` and `reaper_devkit` as Lambda and the tests do.
typecheck: $(VENV)/.ready
	MYPYPATH=layers/reaper:devkit $(VENV)/bin/mypy --explicit-package-bases layers/reaper/reaper functions scripts

unit: $(VENV)/.ready
	$(VENV)/bin/pytest tests/unit

integration: $(VENV)/.ready
	$(VENV)/bin/pytest tests/integration

# both stacks: the member's (template.yaml, also the StackSet's) and the central account's (org/central.yaml)
sam-validate: $(SAMVENV)/.ready
	$(SAM) validate --lint --region us-east-1
	$(SAM) validate --lint --region us-east-1 -t org/central.yaml

# cloudformation, not serverless: checkov's serverless framework reads serverless.yml (the
# Serverless Framework); SAM resources are checked by the cloudformation one. Every finding is
# fixed or skipped inline in template.yaml (Metadata: checkov: skip) with its reason.
checkov: $(CHECKOVVENV)/.ready
	$(CHECKOVVENV)/bin/checkov -f template.yaml --framework cloudformation --quiet --compact --skip-download

sam-build: $(SAMVENV)/.ready
	$(SAM) build --parallel --build-dir .aws-sam/build

# The whole suite on every core; worksteal evens out the few long tests (marked slow).
pytest: $(VENV)/.ready
	$(VENV)/bin/pytest tests -n $(WORKERS) --dist worksteal

smoke: $(VENV)/.ready sam-build
	$(PY) scripts/smoke_build.py

# Every step runs at once (sam build waits on the network and the disk while pytest computes);
# each target's output is printed whole when it ends, and any failure fails `make test`.
test: $(VENV)/.ready $(SAMVENV)/.ready
	$(MAKE) --no-print-directory -j6 --output-sync=target lint typecheck pytest sam-validate checkov smoke docs-check

# The safety properties (tests/unit/test_safety_properties.py) at 10,000 examples each.
props: $(VENV)/.ready
	MLREAPER_PROP_EXAMPLES=$(PROPS) $(VENV)/bin/pytest tests/unit/test_safety_properties.py -n $(WORKERS)

# Under a minute: unit tests in one process (starting xdist workers would cost more than it saves).
check: $(VENV)/.ready
	$(MAKE) --no-print-directory -j3 --output-sync=target lint typecheck unit

bench: $(VENV)/.ready
	$(PY) bench/sweep_bench.py

clean:
	rm -rf $(VENV) $(SAMVENV) $(CHECKOVVENV) .aws-sam .site
