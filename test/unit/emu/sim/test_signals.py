"""The emulator's traffic-light controllers (emu/sim/signals.py)."""




def test_traffic_light_plan_cycles(make_sim):
    sim, _ = make_sim(only=())
    seen = []
    for _ in range(50):
        sim.step(50)                                             # 1 s
        seen.append(sim.snapshot().lights[0].status)
    assert seen[:16] == [16] * 16 and seen[17:21] == [48] * 4
    assert seen[21:24] == [4] * 3 and seen[24:49] == [1] * 25
    assert seen[49] == 16                                        # t = 50 s: next cycle
