"""Loading a policy never runs code from the file: safetensors for shipped policies, weights_only for checkpoints."""

from __future__ import annotations

import json
import pathlib
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from safetensors.torch import save_file  # noqa: E402

from agents.policy import (  # noqa: E402
    CHECKPOINT_FORMAT,
    METADATA_KEY,
    POLICY_FORMAT,
    PRETRAINED_DIR,
    PolicyAgent,
    PolicyNet,
    export_policy,
    load_checkpoint,
)
from thirtyone_env import encoding  # noqa: E402
from thirtyone_env.rules import Rules  # noqa: E402
from thirtyone_env.vector import VectorThirtyOne  # noqa: E402


class WriteFile:
    """A pickle payload: unpickling it writes ``path`` (what an attacker's policy.pt would do)."""

    def __init__(self, path: pathlib.Path):
        self.path = path

    def __reduce__(self):
        return pathlib.Path.write_text, (self.path, "the payload ran")


def small_net(rules: Rules, n: int, advice: bool, seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    net = PolicyNet(encoding.obs_dim(rules.deck_size, n), rules.num_actions,
                    encoding.scale(rules.deck_size, n, rules.start_chips * n), hidden=16, advice=advice)
    with torch.no_grad():  # an untrained actor is nearly uniform: make the moves depend on the weights
        net.actor.weight.normal_(0.0, 1.0)
    return net.eval()


def training_checkpoint(path: pathlib.Path, net: PolicyNet, rules: Rules, n: int, **extra) -> pathlib.Path:
    """What train/ppo.py writes: plain data and tensors only, optimizer state included."""
    optimizer = torch.optim.Adam(net.parameters())
    torch.save({"format": CHECKPOINT_FORMAT, "rules": rules.to_dict(), "num_players": n, "hidden": net.hidden,
                "advice": net.advice, "model": net.state_dict(), "optimizer": optimizer.state_dict(),
                "decisions": 4096, "elapsed": 12.5, "updates": 2, **extra}, path)
    return path


def write_safetensors(path: pathlib.Path, net: PolicyNet, metadata: dict[str, str] | None) -> pathlib.Path:
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, path, metadata=metadata)
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple[pathlib.Path, PolicyNet, Rules]:
    rules = Rules.preset("scat")
    net = small_net(rules, 2, advice=False)
    folder = tmp_path_factory.mktemp("exported")
    return export_policy(training_checkpoint(folder / "last.pt", net, rules, 2), folder / "p.safetensors"), net, rules


# -- (a) a crafted pickle is refused before anything in it runs ----------------------------------------
def malicious_files(folder: pathlib.Path, sentinel: pathlib.Path) -> list[pathlib.Path]:
    payload = {"format": CHECKPOINT_FORMAT, "model": WriteFile(sentinel)}
    zipped, legacy, plain = folder / "zip.pt", folder / "legacy.pt", folder / "plain.pt"
    torch.save(payload, zipped)
    torch.save(payload, legacy, _use_new_zipfile_serialization=False)
    plain.write_bytes(pickle.dumps(payload, protocol=2))
    disguised = folder / "disguised.safetensors"  # the name must not choose the reader
    disguised.write_bytes(zipped.read_bytes())
    return [zipped, legacy, plain, disguised]


def test_the_payload_is_live(tmp_path):
    """Control: unpickled the unsafe way, the crafted file does write its sentinel."""
    sentinel = tmp_path / "SENTINEL"
    plain = malicious_files(tmp_path, sentinel)[2]
    pickle.loads(plain.read_bytes())
    assert sentinel.exists()


@pytest.mark.parametrize("kind", range(4))
def test_a_pickle_holding_code_is_refused_and_never_runs(tmp_path, kind):
    sentinel = tmp_path / "SENTINEL"
    path = malicious_files(tmp_path, sentinel)[kind]
    for load in (PolicyAgent.load, load_checkpoint):
        with pytest.raises(ValueError, match=r"refusing to load .*could run code \(weights_only=True rejected: "
                                             r"unsupported global .*\)") as exc:
            load(path)
        assert str(path) in str(exc.value)
    assert not sentinel.exists()


def test_the_cli_refuses_a_pickle_holding_code(tmp_path, capsys):
    from train.cli import main

    sentinel = tmp_path / "SENTINEL"
    path = malicious_files(tmp_path, sentinel)[0]
    assert main(["eval", "--agents", f"policy:{path}", "heuristic", "--matches", "2"]) != 0
    assert "refusing to load" in capsys.readouterr().err
    assert not sentinel.exists()


def test_a_checkpoint_with_numpy_arrays_is_refused_too(tmp_path):
    """Only tensors and plain data pass weights_only: training stores numpy state as tensors."""
    rules = Rules.preset("scat")
    path = training_checkpoint(tmp_path / "np.pt", small_net(rules, 2, False), rules, 2, env={"x": np.zeros(3)})
    with pytest.raises(ValueError, match="refusing to load"):
        load_checkpoint(path)


def test_a_training_checkpoint_loads_with_its_optimizer_state(tmp_path):
    rules = Rules.preset("italian")
    net = small_net(rules, 3, advice=True)
    path = training_checkpoint(tmp_path / "last.pt", net, rules, 3, env={"deck": torch.arange(40)})
    ckpt = load_checkpoint(path)
    assert ckpt["format"] == CHECKPOINT_FORMAT and ckpt["updates"] == 2 and "state" in ckpt["optimizer"]
    agent = PolicyAgent.load(path)
    assert agent.num_players == 3 and agent.rules == rules and agent.net.advice


def test_a_torch_checkpoint_of_another_format_version_is_refused(tmp_path):
    rules = Rules.preset("scat")
    path = training_checkpoint(tmp_path / "old.pt", small_net(rules, 2, False), rules, 2, format="thirtyone-ppo/0")
    with pytest.raises(ValueError, match=r"old\.pt has format 'thirtyone-ppo/0'"):
        load_checkpoint(path)


# -- (b) export -> load plays the same moves --------------------------------------------------------
@pytest.mark.parametrize("preset,n,advice", [("scat", 2, False), ("scat", 3, True), ("italian", 2, True)])
def test_export_then_load_plays_identically(tmp_path, preset, n, advice):
    rules = Rules.preset(preset)
    net = small_net(rules, n, advice, seed=n)
    src = training_checkpoint(tmp_path / "last.pt", net, rules, n)
    dst = export_policy(src, tmp_path / "out" / "policy.safetensors")
    assert sorted(p.name for p in dst.parent.iterdir()) == ["policy.safetensors"]  # no .tmp left behind
    assert dst.read_bytes()[8:9] == b"{" and dst.stat().st_size < src.stat().st_size

    ckpt = load_checkpoint(dst)
    assert ckpt["format"] == POLICY_FORMAT and ckpt["rules"] == rules.to_dict()  # None and 30.5 survive JSON
    assert ckpt["trained"] == {"decisions": 4096, "elapsed": 12.5}
    assert (ckpt["num_players"], ckpt["hidden"], ckpt["advice"]) == (n, 16, advice)
    for key, value in net.state_dict().items():
        assert torch.equal(ckpt["model"][key], value), key

    original, loaded = PolicyAgent(net, rules, n), PolicyAgent.load(dst)
    vec = VectorThirtyOne(64, n, rules, seed=5)
    obs, mask, _ = vec.reset()
    for _ in range(30):
        moves = original.act_batch(obs, mask)
        assert np.array_equal(loaded.act_batch(obs, mask), moves)
        obs, mask, _, _, _ = vec.step(moves)
    assert export_policy(dst, tmp_path / "again.pt").read_bytes() == dst.read_bytes()  # re-export: same file


def test_an_exported_policy_loads_by_content_whatever_its_name(tmp_path, exported):
    path, net, rules = exported
    renamed = tmp_path / "policy.pt"
    renamed.write_bytes(path.read_bytes())
    assert load_checkpoint(renamed)["format"] == POLICY_FORMAT
    assert PolicyAgent.load(renamed, rules="scat", num_players=2).net.hidden == net.hidden


# -- (c) damaged or foreign files give clear errors ----------------------------------------------
def test_corrupt_safetensors_files_are_reported(tmp_path, exported):
    data = exported[0].read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"policy file .*truncated\.safetensors is corrupt"):
        PolicyAgent.load(truncated)
    header = int.from_bytes(data[:8], "little")
    mangled = tmp_path / "mangled.safetensors"
    mangled.write_bytes(data[:8] + b"{" + b"\x00" * (header - 1) + data[8 + header:])
    with pytest.raises(ValueError, match=r"mangled\.safetensors is corrupt"):
        load_checkpoint(mangled)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"definitely not a tensor file")
    with pytest.raises(ValueError, match=r"garbage\.safetensors is corrupt or not a policy file"):
        load_checkpoint(garbage)
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "missing.safetensors")


def good_metadata(rules: Rules, n: int = 2, hidden: int = 16) -> dict:
    return {"format": POLICY_FORMAT, "rules": rules.to_dict(), "num_players": n, "hidden": hidden, "advice": False,
            "obs_dim": encoding.obs_dim(rules.deck_size, n), "num_actions": rules.num_actions, "trained": {}}


@pytest.mark.parametrize("change,message", [
    (None, r"not a thirtyone-env policy \(no 'thirtyone' metadata\)"),
    ("{not json", "metadata that is not valid JSON"),
    ("[1, 2]", "metadata that is not a JSON object"),
    ({"format": "thirtyone-policy/1"}, r"policy format 'thirtyone-policy/1'; this version reads 'thirtyone-policy/2'"),
    ({"format": CHECKPOINT_FORMAT}, "policy format 'thirtyone-ppo/1'"),
    ({"num_players": None}, r"bad policy metadata: num_players=None is not int"),
    ({"hidden": True}, "hidden=True is not int"),
    ({"rules": {"name": "scat", "deck": "tarot"}}, "metadata this package cannot play"),
    ({"rules": {"name": "scat", "bogus": 1}}, "metadata this package cannot play"),
    ({"num_players": 12}, "metadata this package cannot play"),
    ({"obs_dim": 100}, r"metadata says obs_dim=100, actions=56; scat with 2 players needs 487, 56"),
    ({"num_players": 3}, "scat with 3 players needs 648, 56"),
])
def test_wrong_or_missing_metadata_is_reported(tmp_path, exported, change, message):
    _, net, rules = exported
    if change is None:
        metadata = None
    elif isinstance(change, str):
        metadata = {METADATA_KEY: change}
    else:
        metadata = {METADATA_KEY: json.dumps({**good_metadata(rules), **change})}
    path = write_safetensors(tmp_path / "bad.safetensors", net, metadata)
    with pytest.raises(ValueError, match=message) as exc:
        PolicyAgent.load(path)
    assert str(path) in str(exc.value)


def test_missing_metadata_fields_are_named(tmp_path, exported):
    _, net, rules = exported
    meta = good_metadata(rules)
    del meta["rules"], meta["advice"]
    path = write_safetensors(tmp_path / "bad.safetensors", net, {METADATA_KEY: json.dumps(meta)})
    with pytest.raises(ValueError, match="rules is missing; advice is missing"):
        load_checkpoint(path)


@pytest.mark.parametrize("change", [{"hidden": 32}, {"advice": True}])
def test_metadata_that_does_not_fit_the_tensors_is_reported(tmp_path, exported, change):
    _, net, rules = exported
    meta = {**good_metadata(rules), **change}
    path = write_safetensors(tmp_path / "misfit.safetensors", net, {METADATA_KEY: json.dumps(meta)})
    with pytest.raises(ValueError, match=r"misfit\.safetensors does not fit scat with 2 players"):
        PolicyAgent.load(path)


# -- (d) the shipped policies ------------------------------------------------------------------------
SHIPPED = ["italian_2p", "italian_3p", "italian_4p", "russian_2p", "russian_3p", "russian_4p", "scat_2p", "scat_3p",
           "scat_4p", "scat_5p", "scat_6p", "swedish-chips_2p", "swedish-chips_3p", "swedish-chips_4p",
           "swedish_2p", "swedish_3p", "swedish_4p"]


def test_every_shipped_policy_is_safetensors_and_listed():
    assert PolicyAgent.available() == SHIPPED
    assert not list(PRETRAINED_DIR.glob("*.pt")), "shipped policies must not be pickles"


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_policy_loads(name):
    preset, players = name.rsplit("_", 1)
    n = int(players.rstrip("p"))
    ckpt = load_checkpoint(PRETRAINED_DIR / f"{name}.safetensors")
    assert ckpt["format"] == POLICY_FORMAT and ckpt["trained"]["decisions"] > 0
    agent = PolicyAgent.pretrained(preset, n)
    assert agent.name == f"pretrained:{name}" and agent.num_players == n and agent.rules == Rules.preset(preset)


# -- an ensemble as one policy file ---------------------------------------------------------------------
@pytest.mark.parametrize("advice", [False, True])
def test_averaged_policies_play_the_mean_of_their_logits_from_one_file(tmp_path, advice, monkeypatch):
    import runpy

    rules = Rules.preset("scat")
    nets = [small_net(rules, 2, advice, seed=k) for k in range(3)]
    if advice:  # advice weights that differ, so that their mean is checked too
        with torch.no_grad():
            nets[1].advice_weight.fill_(1.5)
    files = [str(training_checkpoint(tmp_path / f"p{k}.pt", net, rules, 2)) for k, net in enumerate(nets)]
    out = tmp_path / "merged.safetensors"
    monkeypatch.setattr("sys.argv", ["average_policies.py", str(out), *files])
    runpy.run_path(str(pathlib.Path(__file__).parents[1] / "scripts" / "average_policies.py"), run_name="__main__")

    merged = PolicyAgent.load(out)
    assert merged.net.hidden == 48
    obs, mask, _ = VectorThirtyOne(64, 2, rules, seed=5).reset()
    x, m = torch.as_tensor(obs), torch.as_tensor(mask)
    advised = torch.as_tensor(np.argmax(mask, axis=1)) if advice else None
    with torch.no_grad():
        mean = sum(net.masked_logits(net.features(x), m, advised) for net in nets) / 3
        values = sum(net.get_value(x) for net in nets) / 3
        got = merged.net.masked_logits(merged.net.features(x), m, advised)
        legal = m.bool()
        assert torch.allclose(got[legal], mean[legal], atol=1e-5)
        assert torch.allclose(merged.net.get_value(x), values, atol=1e-5)


def test_averaging_policies_of_different_settings_is_refused():
    from agents.policy import logit_average

    rules = Rules.preset("scat")
    with pytest.raises(ValueError, match="one setting"):
        logit_average([small_net(rules, 2, False), small_net(rules, 3, False)])


# -- files of the first observation layout (before the opponents' moves were observed) ---------------------
@pytest.mark.parametrize("fmt", ["safetensors", "checkpoint"])
def test_a_first_layout_policy_loads_and_plays_as_it_did_ignoring_the_added_pieces(tmp_path, fmt):
    rules, n = Rules.preset("scat"), 3
    first_dim = encoding.obs_dim_v1(rules.deck_size, n)
    torch.manual_seed(1)
    old = PolicyNet(first_dim, rules.num_actions, encoding.scale(rules.deck_size, n, rules.start_chips * n)[:first_dim],
                    hidden=16)
    with torch.no_grad():
        old.actor.weight.normal_(0.0, 1.0)
    if fmt == "checkpoint":
        path = training_checkpoint(tmp_path / "old.pt", old, rules, n)
    else:  # a file exported before: its metadata gives the first layout's length
        meta = {"format": POLICY_FORMAT, "rules": rules.to_dict(), "num_players": n, "hidden": 16, "advice": False,
                "obs_dim": first_dim, "num_actions": rules.num_actions}
        path = write_safetensors(tmp_path / "old.safetensors", old, {METADATA_KEY: json.dumps(meta)})
    assert load_checkpoint(path)["model"]["trunk.0.weight"].shape[1] == first_dim

    agent = PolicyAgent.load(path)
    assert agent.net.obs_dim == encoding.obs_dim(rules.deck_size, n) > first_dim
    vec = VectorThirtyOne(64, n, rules, seed=3)
    obs, mask, _ = vec.reset()
    for _ in range(40):
        moves = agent.act_batch(obs, mask)
        assert np.array_equal(moves, old.act(obs[:, :first_dim], mask))
        with torch.no_grad():  # the added inputs carry zero weights: values equal too
            value = agent.net.get_value(torch.as_tensor(obs))
            assert torch.allclose(value, old.get_value(torch.as_tensor(obs[:, :first_dim])), atol=1e-6)
        obs, mask, _, _, _ = vec.step(moves)
    assert encoding.views(obs, 52, n)["opp_thrown"].any()  # the added pieces were there to ignore
    upgraded = load_checkpoint(export_policy(path, tmp_path / "new.safetensors"))  # export writes today's layout
    assert upgraded["obs_dim"] == upgraded["model"]["trunk.0.weight"].shape[1] == agent.net.obs_dim


def test_a_file_for_neither_layout_is_refused_naming_today_s_length(tmp_path):
    rules = Rules.preset("scat")
    net = PolicyNet(100, rules.num_actions, np.ones(100, np.float32), hidden=16)
    src = training_checkpoint(tmp_path / "odd.pt", net, rules, 2)
    with pytest.raises(ValueError, match=r"does not fit scat with 2 players \(obs_dim 487"):
        PolicyAgent.load(src)
