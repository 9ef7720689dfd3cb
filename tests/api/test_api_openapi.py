"""The OpenAPI document is generated from the code, valid, complete, and the API conforms to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import schemathesis
from api_helpers import add_user, configure, create_phase, predictions, upload
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from leaderboard import create_app

EXAMPLES = 30  # per operation and mode
# positive_data_acceptance is left out: a schema-valid multipart part can still be an invalid
# label or prediction file, whose content JSON Schema cannot describe; 400 is right then.
STATIC = Path(__file__).resolve().parents[2] / "leaderboard" / "static"


def test_document_is_valid_openapi_3_1(client):
    document = client.get("/api/v1/openapi.json").get_json()
    validate(document)
    assert document["openapi"] == "3.1.0"
    used_tags = {tag for item in document["paths"].values() for op in item.values() for tag in op["tags"]}
    assert used_tags == {tag["name"] for tag in document["tags"]}
    assert document["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": "Personal API token (tb_...)."}


def test_every_api_route_is_in_the_document(app, client):
    document = client.get("/api/v1/openapi.json").get_json()
    documented = {(path, method) for path, item in document["paths"].items() for method in item}
    routed = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in app.url_map.iter_rules() if rule.endpoint.startswith("api.") and rule.endpoint != "api.docs_page"
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    assert documented == routed
    assert ("/api/v1/phases/{phase_id}/submissions", "post") in documented


def test_operations_carry_request_and_response_schemas_and_security(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    upload_op = paths["/api/v1/phases/{phase_id}/submissions"]["post"]
    form = upload_op["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert form == {"$ref": "#/components/schemas/SubmissionUpload"}
    assert set(upload_op["responses"]) >= {"202", "400", "401", "404", "409", "413", "429"}
    assert upload_op["security"] == [{"bearerAuth": []}]
    assert "Idempotency-Key" in {p["name"] for p in upload_op["parameters"]}
    assert paths["/api/v1/competitions"]["post"]["security"] == [{"bearerAuth": []}]
    assert "403" in paths["/api/v1/competitions"]["post"]["responses"]
    board = paths["/api/v1/phases/{phase_id}/leaderboard"]["get"]
    assert set(board["responses"]["200"]["content"]) == {"application/json"}  # a client parses one kind of answer
    formats = next(p for p in board["parameters"] if p["name"] == "format")["schema"]
    assert formats.get("const") == "json" or formats.get("enum") == ["json"], formats
    csv_op = paths["/api/v1/phases/{phase_id}/leaderboard.csv"]["get"]
    assert set(csv_op["responses"]["200"]["content"]) == {"text/csv"}
    assert {"page", "per_page", "format"}.isdisjoint(p["name"] for p in csv_op["parameters"])
    export = paths["/api/v1/competitions/{slug}/export"]["get"]["responses"]["200"]["content"]
    assert set(export) == {"application/zip"}


def test_the_document_says_who_may_read_a_submission(client):
    read = client.get("/api/v1/openapi.json").get_json()["paths"]["/api/v1/submissions/{submission_id}"]["get"]
    assert not read["description"].startswith("Anyone") and "401" in read["responses"]
    assert "baseline" in read["description"] and "token" in read["description"]


def test_result_figures_the_api_returns_are_in_the_schema(client):
    components = client.get("/api/v1/openapi.json").get_json()["components"]["schemas"]
    results, metrics = components["Results"]["properties"], components["Metrics"]["properties"]
    assert {"aurc", "risk_coverage", "reliability", "popularity_curve", "overall", "breakdowns"} <= set(results)
    assert {"aurc", "risk_coverage", "grid", "exact", "ece", "ci"} <= set(metrics)


def test_browsable_docs_use_only_vendored_assets(client):
    page = client.get("/api/v1/docs").get_data(as_text=True)
    assert "swagger-ui-bundle.js" in page and "/api/v1/openapi.json" in page
    for src in re.findall(r'(?:src|href)="([^"]+)"', page):
        assert src.startswith("/static/"), src
        assert client.get(src).status_code == 200
    assert (STATIC / "vendor" / "swagger-ui" / "LICENSE").exists()


@pytest.fixture
def fuzz_app(tmp_path):
    """Return an app with a competition, an open phase and a scored submission to explore."""
    app = configure(create_app({"data_dir": tmp_path / "data", "labels_dir": tmp_path / "labels", "testing": True}))
    client = app.test_client()
    organizer = add_user(app, "org@example.org", "Organizer", organizer=True)
    phase_id = create_phase(client, organizer, max_per_day="unlimited")
    upload(client, organizer, phase_id, predictions())
    app.config["FUZZ_TOKEN"] = organizer.token
    return app


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_api_conforms_to_its_document_and_never_fails_with_5xx(fuzz_app, mode):
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", fuzz_app)
    headers = {"Authorization": f"Bearer {fuzz_app.config['FUZZ_TOKEN']}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10  # schemathesis skips the document itself
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])

        try:
            check()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE  # an operation without inputs has nothing to break
